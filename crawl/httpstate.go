package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
)

// httpState is the HTTP layer under one MCP session: it binds every request
// to the probe's deadline (the SDK sends some, like the closing DELETE, on
// contexts of its own), sets the User-Agent and protocol-version headers,
// counts response bytes against the cap, refuses redirects to another
// scheme, and remembers what it saw so that a failure gets its true kind.
type httpState struct {
	ctx    context.Context
	p      *Prober
	scheme string

	read       atomic.Int64
	overBytes  atomic.Bool
	badStatus  atomic.Int32
	initStatus atomic.Int32 // status of the first POST (initialize)
	posted     atomic.Bool
	redirect   atomic.Pointer[error]

	mu      sync.Mutex
	version string
}

func (p *Prober) newHTTPState(ctx context.Context, u *url.URL) *httpState {
	return &httpState{ctx: ctx, p: p, scheme: u.Scheme}
}

func (hs *httpState) setProtocolVersion(v string) {
	hs.mu.Lock()
	hs.version = v
	hs.mu.Unlock()
}

// maxRedirects is how many redirects one request may follow.
const maxRedirects = 5

func (hs *httpState) client() *http.Client {
	return &http.Client{
		// No Timeout: RoundTrip binds every request to the probe's
		// deadline, which covers the whole exchange.
		Transport: hs,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			var err error
			switch {
			case req.URL.Scheme != hs.scheme:
				err = fmt.Errorf("redirect from %s to %s refused: another scheme", via[0].URL.Redacted(), req.URL.Redacted())
			case len(via) >= maxRedirects:
				err = fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if err != nil {
				hs.redirect.CompareAndSwap(nil, &err)
			}
			return err
		},
	}
}

var errOverBytes = errors.New("response byte cap reached")

// RoundTrip implements http.RoundTripper.
func (hs *httpState) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := hs.ctx.Err(); err != nil {
		return nil, err
	}
	if req.URL.Scheme != hs.scheme {
		// The SSE endpoint event may name any URL.
		err := fmt.Errorf("request to %s refused: another scheme than the candidate's", req.URL.Redacted())
		hs.redirect.CompareAndSwap(nil, &err)
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(hs.ctx, cancel)
	req = req.Clone(ctx)
	req.Header.Set("User-Agent", hs.p.opt.UserAgent)
	hs.mu.Lock()
	if v := hs.version; v != "" && req.Header.Get("Mcp-Protocol-Version") == "" {
		req.Header.Set("Mcp-Protocol-Version", v)
	}
	hs.mu.Unlock()
	first := req.Method == http.MethodPost && hs.posted.CompareAndSwap(false, true)
	resp, err := hs.p.base.RoundTrip(req)
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	if first {
		hs.initStatus.Store(int32(resp.StatusCode))
	}
	// A 405 to the optional GET stream or DELETE is allowed by the spec.
	if resp.StatusCode >= 400 && (req.Method == http.MethodPost || resp.StatusCode != http.StatusMethodNotAllowed) &&
		req.Method != http.MethodDelete {
		hs.badStatus.CompareAndSwap(0, int32(resp.StatusCode))
	}
	resp.Body = &countedBody{rc: resp.Body, hs: hs, done: func() { stop(); cancel() }}
	return resp, nil
}

// countedBody counts what is read of a response against the byte cap.
type countedBody struct {
	rc   io.ReadCloser
	hs   *httpState
	once sync.Once
	done func()
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if b.hs.read.Add(int64(n)) > b.hs.p.opt.MaxBytes {
		b.hs.overBytes.Store(true)
		return n, errOverBytes
	}
	return n, err
}

func (b *countedBody) Close() error {
	err := b.rc.Close()
	b.once.Do(b.done)
	return err
}
