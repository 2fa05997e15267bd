// Package zenodohttp is the one HTTP core of the two Zenodo clients (fetch,
// which downloads records, and publish/zenodo, which deposits them): retries
// with backoff that honour Retry-After, a transport whose every phase has a
// timeout, a credential attached only to the origin it was issued for, and
// a server's error text bounded and made safe for a terminal.
//
// It holds the policy, not the requests: each client builds its own
// requests and says, through Retryable, which failures another attempt may
// cure.
package zenodohttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
)

// Timeouts of the transport's phases. A request's body and answer may take
// hours (a multi-gigabyte upload), so there is no overall timeout; a client
// that reads long bodies adds its own idle watchdog (fetch does).
const (
	DialTimeout           = 30 * time.Second
	TLSHandshakeTimeout   = 30 * time.Second
	ResponseHeaderTimeout = 2 * time.Minute
	IdleConnTimeout       = 90 * time.Second
)

// MaxRetryAfter bounds how long a Retry-After header may make a client
// wait; a server asking for longer fails the request at once.
const MaxRetryAfter = 10 * time.Minute

// Transport is a private transport with a timeout on every phase before
// the body: connecting, the TLS handshake, and waiting for the answer's
// headers, so that a server that never answers cannot hold a command
// forever.
func Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = TLSHandshakeTimeout
	t.ResponseHeaderTimeout = ResponseHeaderTimeout
	t.IdleConnTimeout = IdleConnTimeout
	t.ExpectContinueTimeout = time.Second
	return t
}

// Retryable marks a failure that another attempt may cure.
type Retryable struct {
	Err error
	// After is the server's Retry-After, zero when it gave none.
	After time.Duration
}

func (r *Retryable) Error() string { return r.Err.Error() }
func (r *Retryable) Unwrap() error { return r.Err }

// RetryableStatus reports whether an HTTP status is worth another attempt:
// 429 and every 5xx.
func RetryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500
}

// Policy is how a client retries.
type Policy struct {
	// Retries bounds the attempts after the first (0: none).
	Retries int
	// Backoff is the wait before the nth retry; nil means DefaultBackoff.
	// A Retry-After lengthens the wait, never shortens it.
	Backoff func(retry int) time.Duration
	// Sleep waits and returns early with ctx's error; nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Notify, when set, is told of each retry before its wait.
	Notify func(what string, err error, retry, of int, wait time.Duration)
}

// Do runs attempt until it succeeds, fails with an error that is not
// *Retryable, or the retry budget is spent. attempt reports whether it
// made progress, which restores the budget: a long transfer over a flaky
// link should not fail because the link dropped six times in an hour.
func (p Policy) Do(ctx context.Context, what string, attempt func() (progressed bool, err error)) error {
	backoff, sleep := p.Backoff, p.Sleep
	if backoff == nil {
		backoff = DefaultBackoff
	}
	if sleep == nil {
		sleep = Sleep
	}
	retries := max(p.Retries, 0)
	failures := 0
	for {
		progressed, err := attempt()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var r *Retryable
		if !errors.As(err, &r) {
			return err
		}
		if progressed {
			failures = 0
		}
		failures++
		if failures > retries {
			if retries == 0 {
				return r.Err
			}
			return fmt.Errorf("giving up after %d %s: %w", retries, plural(retries, "retry", "retries"), r.Err)
		}
		if r.After > MaxRetryAfter {
			return fmt.Errorf("the server asked to retry after %v, longer than the %v this tool waits; try again later: %w", r.After, MaxRetryAfter, r.Err)
		}
		wait := max(backoff(failures), r.After)
		if p.Notify != nil {
			p.Notify(what, r.Err, failures, retries, wait)
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// DefaultBackoff waits 1s before the first retry and doubles up to 1
// minute. There is no jitter: a single client has no herd to spread out.
func DefaultBackoff(retry int) time.Duration {
	if retry < 1 {
		retry = 1
	}
	if retry > 7 {
		return time.Minute
	}
	return min(time.Second<<(retry-1), time.Minute)
}

// Sleep waits d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ParseRetryAfter reads Retry-After as delay-seconds or an HTTP date; an
// absent or unreadable value is zero, and the delay is capped at a day.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(24*time.Hour/time.Second) {
			return 24 * time.Hour
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// Origin is a URL's scheme and host (with its port), the unit a
// credential is issued for.
func Origin(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	switch {
	case port == "" && u.Scheme == "https":
		port = "443"
	case port == "" && u.Scheme == "http":
		port = "80"
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

// OriginError is a request that would have carried a credential to
// another origin than the one it was issued for.
type OriginError struct {
	URL, Origin string
}

func (e *OriginError) Error() string {
	return fmt.Sprintf("refusing to send the access token to %s: the token is for %s only (the server linked to another origin)", termtext.Safe(e.URL), e.Origin)
}

// Authorize sets req's bearer token when req goes to base's origin, and
// refuses it with *OriginError otherwise: a link in a server's answer (a
// bucket, a draft) never takes the token elsewhere.
func Authorize(req *http.Request, base, token string) error {
	bu, err := url.Parse(base)
	if err != nil || bu.Host == "" {
		return fmt.Errorf("the base URL %q is not an absolute URL", base)
	}
	if Origin(req.URL) != Origin(bu) {
		return &OriginError{URL: req.URL.Redacted(), Origin: Origin(bu)}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return nil
}

// SameOriginRedirects is an http.Client CheckRedirect that drops nothing
// but refuses a redirect to another origin when the request carries a
// credential (Go's client would strip the header; refusing says so).
func SameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return fmt.Errorf("stopped after %d redirects", len(via))
	}
	if via[0].Header.Get("Authorization") != "" && Origin(req.URL) != Origin(via[0].URL) {
		return &OriginError{URL: req.URL.Redacted(), Origin: Origin(via[0].URL)}
	}
	return nil
}

// MaxText is how much of a server's error text a message quotes.
const MaxText = 500

// Text is a server's text made fit for an error message: control and
// escape sequences replaced (internal/termtext), one line, at most MaxText
// bytes.
func Text(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > MaxText {
		cut := MaxText
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return termtext.Safe(s)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
