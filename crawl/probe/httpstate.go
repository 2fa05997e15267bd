package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
)

// httpState is the HTTP layer under one MCP session: it binds every request
// to the probe's deadline (the SDK sends some, like the closing DELETE, on
// contexts of its own), sets the User-Agent and protocol-version headers,
// counts response bytes against the cap and the memory budget, refuses
// redirects to another scheme, and records the first failure it sees with
// its kind, so that a failure the SDK reports flattened to text still gets
// its true kind.
type httpState struct {
	ctx    context.Context
	p      *Prober
	scheme string
	mem    *account

	read       atomic.Int64
	initStatus atomic.Int32 // status of the first POST (initialize)
	getStatus  atomic.Int32 // status of the first GET (the legacy SSE stream)
	posted     atomic.Bool
	answered   atomic.Bool // an HTTP response (a status line at least) arrived
	got        atomic.Bool
	failure    atomic.Pointer[Error]
	authMeta   atomic.Pointer[string] // resource_metadata of WWW-Authenticate

	mu      sync.Mutex
	version string
}

func (p *Prober) newHTTPState(ctx context.Context, u *url.URL) *httpState {
	return &httpState{ctx: ctx, p: p, scheme: u.Scheme, mem: p.opt.Budget.newAccount()}
}

func (hs *httpState) setProtocolVersion(v string) {
	hs.mu.Lock()
	hs.version = v
	hs.mu.Unlock()
}

// fail records the first failure of the HTTP layer; later ones follow from
// it.
func (hs *httpState) fail(e *Error) *Error {
	hs.failure.CompareAndSwap(nil, e)
	return e
}

// MaxRedirects is how many redirects one request may follow.
const MaxRedirects = 5

func (hs *httpState) client() *http.Client {
	return &http.Client{
		// No Timeout: RoundTrip binds every request to the probe's
		// deadline, which covers the whole exchange.
		Transport: hs,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			switch {
			case req.URL.Scheme != hs.scheme:
				return hs.fail(probeErrf(KindRedirect, req.Method, "redirect from %s to %s refused: another scheme",
					Redact(via[0].URL), Redact(req.URL)))
			case len(via) >= MaxRedirects:
				return hs.fail(probeErrf(KindRedirect, req.Method, "more than %d redirects", MaxRedirects))
			}
			return nil
		},
	}
}

// Redact is a URL without user information, for messages.
func Redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// RoundTrip implements http.RoundTripper.
func (hs *httpState) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := hs.ctx.Err(); err != nil {
		return nil, err
	}
	if req.URL.Scheme != hs.scheme {
		// The SSE endpoint event may name any URL.
		return nil, hs.fail(probeErrf(KindRedirect, req.Method, "request to %s refused: another scheme than the candidate's", Redact(req.URL)))
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
	firstPost := req.Method == http.MethodPost && hs.posted.CompareAndSwap(false, true)
	firstGet := req.Method == http.MethodGet && hs.got.CompareAndSwap(false, true)
	resp, err := hs.p.base.RoundTrip(req)
	if err != nil {
		stop()
		cancel()
		if hs.ctx.Err() == nil {
			kind := KindConnect
			if errors.Is(err, ErrBlocked) {
				kind = KindBlocked
			}
			hs.fail(probeErr(kind, req.Method, err))
		}
		return nil, err
	}
	hs.answered.Store(true)
	if firstPost {
		hs.initStatus.Store(int32(resp.StatusCode))
	}
	if firstGet {
		hs.getStatus.Store(int32(resp.StatusCode))
	}
	hs.checkStatus(req, resp)
	body := &countedBody{rc: resp.Body, hs: hs, done: func() { stop(); cancel() }}
	resp.Body = body
	if resp.StatusCode/100 == 2 && isJSON(resp.Header.Get("Content-Type")) {
		if err := body.checkJSON(req.Method, resp.ContentLength); err != nil {
			resp.Body.Close()
			return nil, err
		}
	}
	return resp, nil
}

// checkStatus records an HTTP error status. A 405 to the optional GET
// stream or to DELETE is allowed by the specification.
func (hs *httpState) checkStatus(req *http.Request, resp *http.Response) {
	code := resp.StatusCode
	if code < 400 || req.Method == http.MethodDelete || (req.Method != http.MethodPost && code == http.StatusMethodNotAllowed) {
		return
	}
	wa := resp.Header.Values("WWW-Authenticate")
	if code == http.StatusUnauthorized || (code == http.StatusForbidden && len(wa) > 0) {
		if rm := resourceMetadata(wa); rm != "" {
			hs.authMeta.CompareAndSwap(nil, &rm)
		}
		hs.fail(probeErrf(KindAuthRequired, req.Method, "HTTP %d: the server requires authorization", code))
		return
	}
	hs.fail(probeErrf(KindHTTPStatus, req.Method, "HTTP %d", code))
}

// resourceMetadata is the resource_metadata parameter of a Bearer
// challenge (RFC 9728 §5.1), quoted or not, or "".
func resourceMetadata(challenges []string) string {
	const key = "resource_metadata"
	for _, c := range challenges {
		for i := 0; i+len(key) <= len(c); i++ {
			if !strings.EqualFold(c[i:i+len(key)], key) || (i > 0 && !strings.ContainsRune(" \t,", rune(c[i-1]))) {
				continue
			}
			v, ok := strings.CutPrefix(strings.TrimLeft(c[i+len(key):], " \t"), "=")
			if !ok {
				continue
			}
			return authParamValue(strings.TrimLeft(v, " \t"))
		}
	}
	return ""
}

// authParamValue reads a token or a quoted-string (RFC 9110 §11.2).
func authParamValue(v string) string {
	if !strings.HasPrefix(v, `"`) {
		if end := strings.IndexAny(v, " \t,"); end >= 0 {
			return v[:end]
		}
		return v
	}
	var b strings.Builder
	for j := 1; j < len(v); j++ {
		switch v[j] {
		case '\\':
			if j+1 < len(v) {
				j++
				b.WriteByte(v[j])
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(v[j])
		}
	}
	return "" // unterminated
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// readChunk bounds one read, so that the memory budget is taken in small
// steps.
const readChunk = 64 << 10

// countedBody counts what is read of a response against the byte cap and
// takes it from the memory budget before it is read.
type countedBody struct {
	rc   io.ReadCloser
	hs   *httpState
	buf  *bytes.Reader // a JSON body read ahead by checkJSON
	once sync.Once
	done func()
}

func (b *countedBody) Read(p []byte) (int, error) {
	if b.buf != nil {
		return b.buf.Read(p)
	}
	return b.read(p)
}

func (b *countedBody) read(p []byte) (int, error) {
	hs := b.hs
	// One byte past the cap is enough to know it was passed.
	left := hs.p.opt.MaxBytes + 1 - hs.read.Load()
	if left <= 0 {
		return 0, hs.overBytes()
	}
	p = p[:min(int64(len(p)), left, readChunk)]
	fromReserve, err := hs.mem.acquire(hs.ctx, int64(len(p)))
	if err != nil {
		return 0, err
	}
	n, err := b.rc.Read(p)
	hs.mem.giveBack(int64(len(p)-n), fromReserve)
	if hs.read.Add(int64(n)) > hs.p.opt.MaxBytes {
		return n, hs.overBytes()
	}
	if err != nil && err != io.EOF && hs.ctx.Err() == nil {
		hs.fail(probeErr(KindConnect, "reading a response", err))
	}
	return n, err
}

func (hs *httpState) overBytes() error {
	return hs.fail(probeErrf(KindTooManyBytes, "", "more than %d response bytes", hs.p.opt.MaxBytes))
}

// checkJSON reads a JSON body ahead and checks its syntax, so that a body
// that is not JSON is named so here: the SDK reports its own decoding
// failure only as text.
func (b *countedBody) checkJSON(method string, contentLength int64) error {
	var all bytes.Buffer
	if contentLength > 0 && contentLength <= b.hs.p.opt.MaxBytes {
		all.Grow(int(contentLength)) // one allocation, not a doubling series
	}
	chunk := make([]byte, readChunk)
	for {
		n, err := b.read(chunk)
		all.Write(chunk[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if !json.Valid(all.Bytes()) {
		return b.hs.fail(probeErrf(KindInvalidJSON, method, "the response body is not JSON"))
	}
	b.buf = bytes.NewReader(all.Bytes())
	return nil
}

func (b *countedBody) Close() error {
	err := b.rc.Close()
	b.once.Do(b.done)
	return err
}
