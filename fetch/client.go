package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/defaults"
	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodohttp"
)

// client holds one Download's resolved options and HTTP machinery.
type client struct {
	base      string
	http      *http.Client
	ownHTTP   bool
	retries   int
	timeout   time.Duration
	backoff   func(int) time.Duration
	sleep     func(context.Context, time.Duration) error
	userAgent string
	progress  progress.Func
	log       *slog.Logger
	buf       []byte
}

func newClient(o Options) (*client, error) {
	c := &client{
		base:      o.BaseURL,
		http:      o.HTTPClient,
		retries:   o.Retries,
		timeout:   o.Timeout,
		backoff:   o.Backoff,
		sleep:     o.Sleep,
		userAgent: o.UserAgent,
		progress:  o.Progress,
		log:       o.Logger,
		buf:       make([]byte, 256<<10),
	}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	c.base = strings.TrimRight(c.base, "/")
	if _, err := recordsAPIURL(c.base, "1"); err != nil {
		return nil, err
	}
	defaults.Set(&c.retries, DefaultRetries)
	defaults.Set(&c.timeout, DefaultTimeout)
	if o.NoRetries {
		c.retries = 0
	}
	if o.NoTimeout {
		c.timeout = 0
	}
	if c.backoff == nil {
		c.backoff = DefaultBackoff
	}
	if c.sleep == nil {
		c.sleep = zenodohttp.Sleep
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent()
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.http == nil {
		// A private transport, so that its idle connections (and their
		// goroutines) can be closed when Download returns.
		// Its phases have timeouts (zenodohttp.Transport) beside the
		// idle watchdog of each attempt.
		c.http = &http.Client{Transport: zenodohttp.Transport()}
		c.ownHTTP = true
	} else {
		// A copy, so that the caller's client keeps its own policy.
		hc := *c.http
		c.http = &hc
	}
	c.http.CheckRedirect = checkRedirect(c.http.CheckRedirect)
	return c, nil
}

// maxRedirects is how many redirects one request may follow, as many as Go's
// default policy allows.
const maxRedirects = 10

// redirectError is a redirect that no retry can make good.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// checkRedirect follows redirects to http and https only, and stops a loop
// at once (a URL met twice) or a chain too long; then calls next, the
// caller's own policy, if any.
func checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return &redirectError{fmt.Sprintf("redirected to %q, which is not http or https", req.URL.String())}
		}
		for _, v := range via {
			if v.URL.String() == req.URL.String() {
				return &redirectError{fmt.Sprintf("redirect loop: %q redirects back to itself after %d %s", req.URL.String(), len(via), plural(len(via), "redirect", "redirects"))}
			}
		}
		if len(via) >= maxRedirects {
			return &redirectError{fmt.Sprintf("stopped after %d redirects, at %q", len(via), req.URL.String())}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

func (c *client) close() {
	if c.ownHTTP {
		c.http.CloseIdleConnections()
	}
}

// DefaultBackoff waits 1s before the first retry and doubles up to 1 minute
// (internal/zenodohttp's, the one policy of both Zenodo clients).
func DefaultBackoff(retry int) time.Duration { return zenodohttp.DefaultBackoff(retry) }

// retryable marks a failure that another attempt may cure.
type retryable = zenodohttp.Retryable

// retry runs attempt by the one retry policy of internal/zenodohttp:
// until it succeeds, fails for good, or the retry budget is spent; an
// attempt that made progress restores the budget.
func (c *client) retry(ctx context.Context, what string, attempt func() (progressed bool, err error)) error {
	p := zenodohttp.Policy{
		Retries: c.retries,
		Backoff: c.backoff,
		Sleep:   c.sleep,
		Notify: func(what string, err error, retry, of int, wait time.Duration) {
			c.warnf("%s: %v; retry %d of %d in %v", what, err, retry, of, wait.Round(time.Millisecond))
		},
	}
	return p.Do(ctx, what, attempt)
}

// errStalled is the cancellation cause when a server goes quiet.
var errStalled = errors.New("stalled")

// watchdog returns a context for one attempt that is cancelled when nothing
// arrives for c.timeout, and kick, which the attempt calls whenever bytes
// arrive. One idle limit covers connecting, waiting for headers and reading
// the body, without capping a long but live transfer.
func (c *client) watchdog(ctx context.Context) (actx context.Context, kick func(), stop func()) {
	actx, cancel := context.WithCancelCause(ctx)
	if c.timeout <= 0 {
		return actx, func() {}, func() { cancel(nil) }
	}
	t := time.AfterFunc(c.timeout, func() { cancel(errStalled) })
	return actx, func() { t.Reset(c.timeout) }, func() { t.Stop(); cancel(nil) }
}

// netError classifies a failure to talk to the server during an attempt.
func (c *client) netError(ctx, actx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(context.Cause(actx), errStalled) {
		return &retryable{Err: fmt.Errorf("no data from the server for %v", c.timeout)}
	}
	// A certificate the system does not trust will not become trusted by
	// asking again, nor will a redirect go elsewhere.
	var cv *tls.CertificateVerificationError
	var re *redirectError
	if errors.As(err, &cv) || errors.As(err, &re) {
		return err
	}
	// A name that does not resolve ("no such host") will not resolve a
	// second later either: offline, or no DNS. Five retries would only
	// make the user wait minutes for the same answer. A DNS timeout or a
	// temporary failure of the resolver is retried.
	var de *net.DNSError
	if errors.As(err, &de) && de.IsNotFound {
		return fmt.Errorf("%w (the name does not resolve: is this machine offline?)", err)
	}
	return &retryable{Err: err}
}

// statusError turns a failed HTTP answer into an error, retryable for 429
// and 5xx.
func statusError(req *http.Request, resp *http.Response) error {
	if resp.Request != nil {
		// Name the URL that failed, which after a redirect is not the one asked.
		req = resp.Request
	}
	se := &StatusError{Method: req.Method, URL: req.URL.String(), StatusCode: resp.StatusCode, Status: resp.Status}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return &retryable{Err: se, After: zenodohttp.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	return se
}

// kickReader feeds a watchdog as bytes arrive.
type kickReader struct {
	r    io.Reader
	kick func()
}

func (k kickReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.kick()
	}
	return n, err
}

// summary is the line that says a file is verified.
func summary(res Result) string {
	if res.Skipped {
		return fmt.Sprintf("%q: already complete (record %s, %d bytes, MD5 verified)", res.Path, res.Record, res.Size)
	}
	rate := ""
	if secs := res.Elapsed.Seconds(); secs > 0 && res.Transferred > 0 {
		rate = fmt.Sprintf(", %s/s", progress.Bytes(int64(float64(res.Transferred)/secs)))
	}
	resumed := ""
	if res.Resumed > 0 {
		resumed = fmt.Sprintf(", resumed at %s", progress.Bytes(res.Resumed))
	}
	return fmt.Sprintf("%q: record %s, %d bytes, MD5 verified (%s downloaded in %s%s%s)",
		res.Path, res.Record, res.Size, progress.Bytes(res.Transferred), res.Elapsed.Round(time.Millisecond), rate, resumed)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// logf logs a one-line notice, named as fetch's.
func (c *client) logf(format string, args ...any) {
	c.log.Info("fetch: " + fmt.Sprintf(format, args...))
}

// warnf logs a notice of a failure that is retried.
func (c *client) warnf(format string, args ...any) {
	c.log.Warn("fetch: " + fmt.Sprintf(format, args...))
}
