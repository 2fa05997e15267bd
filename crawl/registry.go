package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/jsontext"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
)

// Defaults of RegistryOptions.
const (
	DefaultRegistryTimeout = 60 * time.Second
	DefaultRegistryPages   = 1000
	DefaultRegistryRetries = 5
	DefaultRegistryMaxWait = 2 * time.Minute
	// DefaultRegistryTotalWait bounds the Retry-After pauses of a whole
	// read, over every page.
	DefaultRegistryTotalWait = 10 * time.Minute
)

const (
	registryPageLimit    = 100
	maxRegistryPageBytes = 64 << 20
	officialMetaKey      = "io.modelcontextprotocol.registry/official"
	registryListPath     = "/v0.1/servers"
	registryStatusActive = "active"
	skipTemplated        = "templated URL with a variable that has no default"
	skipTransport        = "remote transport neither streamable-http nor sse"
	skipNotHTTP          = "not an http(s) URL"
	skipDuplicate        = "same normalised URL as an earlier remote"
	skipStatusPrefix     = "status "
	skipNoRemotes        = "neither remotes nor packages"
	// defaultRetryAfterNoHint is the pause after a 429 or 503 that gives
	// no usable Retry-After.
	defaultRetryAfterNoHint = 5 * time.Second
)

// RegistryOptions configure a read of an MCP Registry's list API.
type RegistryOptions struct {
	// URL is the registry's base URL, e.g. https://registry.modelcontextprotocol.io.
	URL string
	// UpdatedSince, when set, asks only for servers updated since then
	// (RFC 3339), the API's updated_since parameter.
	UpdatedSince string
	// Timeout bounds each request; MaxPages the pages read; Retries the
	// retries of one page after a 429 or 503 (negative: none), each
	// waiting the answer's Retry-After: the pauses of one page together
	// at most MaxWait, those of the whole read at most TotalWait.
	Timeout   time.Duration
	MaxPages  int
	Retries   int
	MaxWait   time.Duration
	TotalWait time.Duration
	// AllowPrivate lets a redirect lead to another host or port at a
	// loopback, private or other special-purpose address, as the crawl's
	// --allow-private does. Without it the registry's own host and port,
	// which the user named, are reached at any address, and any other
	// only at a public one (the crawl's PublicAddr); a redirect to
	// another scheme than the registry's is refused either way.
	AllowPrivate bool
	// Client makes the requests; nil means a client of its own, which
	// follows the address policy above. A Client given is used as it is.
	Client *http.Client
	// sleep waits out a Retry-After; tests replace it.
	sleep func(context.Context, time.Duration) error
	// UserAgent is sent with every request.
	UserAgent string
}

// RegistryStats count what a read of the registry kept and skipped.
type RegistryStats struct {
	// Pages read; Entries listed (every version of every name); Names
	// distinct; Remotes and Packages of the latest versions looked at;
	// Kept the candidates written.
	Pages, Entries, Names, Remotes, Packages, Kept int
	// Invalid counts the packages kept whose entry names nothing that
	// can be fetched: each is a record of kind install with the reason.
	Invalid int
	// Skipped counts servers and remotes left out, by reason.
	Skipped map[string]int
}

// registryEntry is one item of the list API's "servers".
type registryEntry struct {
	Server struct {
		Name     string            `json:"name"`
		Version  string            `json:"version"`
		Remotes  []registryRemote  `json:"remotes"`
		Packages []registryPackage `json:"packages"`
	} `json:"server"`
	Meta map[string]json.RawMessage `json:"_meta"`
	// order is the entry's place in the listing.
	order int
	// official is the registry's own metadata of the entry.
	official struct {
		Status      string `json:"status"`
		PublishedAt string `json:"publishedAt"`
		UpdatedAt   string `json:"updatedAt"`
		IsLatest    *bool  `json:"isLatest"`
	}
}

type registryRemote struct {
	Type          string `json:"type"`
	TransportType string `json:"transportType"` // older entries
	URL           string `json:"url"`
	Headers       []struct {
		Name       string `json:"name"`
		IsRequired bool   `json:"isRequired"`
	} `json:"headers"`
	Variables map[string]struct {
		Default *string `json:"default"`
	} `json:"variables"`
}

type registryPage struct {
	Servers  *[]json.RawMessage `json:"servers"`
	Metadata struct {
		NextCursor *string `json:"nextCursor"`
	} `json:"metadata"`
}

func (o *RegistryOptions) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultRegistryTimeout
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultRegistryPages
	}
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRegistryRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultRegistryMaxWait
	}
	if o.TotalWait <= 0 {
		o.TotalWait = DefaultRegistryTotalWait
	}
	if o.sleep == nil {
		o.sleep = sleepCtx
	}
	if o.UserAgent == "" {
		o.UserAgent = buildinfo.Read().UserAgent()
	}
}

// FetchRegistry reads every page of the registry's list API and returns
// the candidates: for the latest version of each name whose status is
// active (or not given), each streamable-http or sse remote, as a line in
// the layout of candidates_remotes.jsonl with its provenance. A URL seen
// before (normalised) is kept once. The registry is a remote service: each
// request has a deadline, a 429 or 503 is retried after its Retry-After,
// the pages are capped, and an answer that is not the API's JSON is an
// error naming the page. It holds every candidate; StreamRegistry hands
// them out one by one instead.
func FetchRegistry(ctx context.Context, opt RegistryOptions) ([]Candidate, *RegistryStats, error) {
	var out []Candidate
	st, err := StreamRegistry(ctx, opt, func(c Candidate) error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, st, nil
}

// registryCandidates turns the latest entries into candidates, in the order
// of the names' first listing.
func registryCandidates(registry string, names []string, latest map[string]*registryEntry, st *RegistryStats) []Candidate {
	var out []Candidate
	seen := map[string]bool{}
	for _, name := range names {
		e := latest[name]
		if s := e.official.Status; s != "" && s != registryStatusActive {
			st.Skipped[skipStatusPrefix+s]++
			continue
		}
		if len(e.Server.Remotes) == 0 && len(e.Server.Packages) == 0 {
			st.Skipped[skipNoRemotes]++
			continue
		}
		for _, r := range e.Server.Remotes {
			st.Remotes++
			transport := r.Type
			if transport == "" {
				transport = r.TransportType
			}
			if transport != probe.TransportStreamable && transport != probe.TransportSSE {
				st.Skipped[skipTransport]++
				continue
			}
			u, ok := expandTemplate(r)
			if !ok {
				st.Skipped[skipTemplated]++
				continue
			}
			u = probe.StripUserinfo(u)
			id, _, err := probe.Normalise(u)
			if err != nil {
				st.Skipped[skipNotHTTP]++
				continue
			}
			if seen[id] {
				st.Skipped[skipDuplicate]++
				continue
			}
			seen[id] = true
			var required []string
			for _, h := range r.Headers {
				if h.IsRequired {
					required = append(required, h.Name)
				}
			}
			out = append(out, Candidate{Line: len(out) + 1, URL: u,
				Record: registryRecord(u, transport, registry, e.Server.Name, e.Server.Version, required)})
			st.Kept++
		}
		out = appendPackageCandidates(out, registry, e, seen, st)
	}
	return out
}

var templateVar = regexp.MustCompile(`\{([^{}]*)\}`)

// expandTemplate fills the {variables} of a remote's URL with their
// defaults; it fails when one has none.
func expandTemplate(r registryRemote) (string, bool) {
	ok := true
	u := templateVar.ReplaceAllStringFunc(r.URL, func(m string) string {
		v, found := r.Variables[m[1:len(m)-1]]
		if !found || v.Default == nil {
			ok = false
			return m
		}
		return *v.Default
	})
	return u, ok
}

// registryRecord is a candidates_remotes.jsonl line in Python's json.dumps
// layout, the census files' own.
func registryRecord(u, transport, registry, name, version string, required []string) []byte {
	b := append([]byte(`{"url": `), nil...)
	b = jsontext.AppendString(b, u)
	for _, kv := range [][2]string{{"transport", transport}, {"registry", registry}, {"name", name}, {"version", version}} {
		b = append(b, `, "`+kv[0]+`": `...)
		b = jsontext.AppendString(b, kv[1])
	}
	if len(required) > 0 {
		sort.Strings(required)
		b = append(b, `, "headers_required": [`...)
		for i, h := range required {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = jsontext.AppendString(b, h)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// errRetry marks an answer worth asking again after a pause.
type errRetry struct {
	wait time.Duration
	err  error
}

func (e *errRetry) Error() string { return e.err.Error() }

// fetchRegistryPage reads one page, retrying after 429 and 503.
func fetchRegistryPage(ctx context.Context, opt *RegistryOptions, base *url.URL, cursor string, page int, waited *time.Duration) ([]json.RawMessage, string, error) {
	q := url.Values{}
	q.Set("limit", strconv.Itoa(registryPageLimit))
	if cursor != "" {
		// The cursor goes back exactly as given, escaped for the query.
		q.Set("cursor", cursor)
	}
	if opt.UpdatedSince != "" {
		q.Set("updated_since", opt.UpdatedSince)
	}
	u := *base
	u.Path += registryListPath
	u.RawPath = ""
	u.RawQuery = q.Encode()
	where := fmt.Sprintf("registry %s page %d", probe.Redact(base), page)
	var pageWait time.Duration
	for attempt := 0; ; attempt++ {
		servers, next, err := getRegistryPage(ctx, opt, u.String())
		var re *errRetry
		if !errors.As(err, &re) {
			if err != nil {
				return nil, "", fmt.Errorf("%s: %w", where, err)
			}
			return servers, next, nil
		}
		if attempt >= opt.Retries {
			return nil, "", fmt.Errorf("%s: %w (after %d retries)", where, re.err, attempt)
		}
		if re.wait > opt.MaxWait {
			return nil, "", fmt.Errorf("%s: %w, and Retry-After %v is longer than the %v allowed", where, re.err, re.wait, opt.MaxWait)
		}
		// A registry that asks for the longest pause allowed, again and
		// again, must not hold the read for hours.
		if pageWait+re.wait > opt.MaxWait {
			return nil, "", fmt.Errorf("%s: %w, and another Retry-After %v would make this page wait more than the %v allowed", where, re.err, re.wait, opt.MaxWait)
		}
		if *waited+re.wait > opt.TotalWait {
			return nil, "", fmt.Errorf("%s: %w, and another Retry-After %v would make the read wait more than the %v allowed in all", where, re.err, re.wait, opt.TotalWait)
		}
		pageWait += re.wait
		*waited += re.wait
		if err := opt.sleep(ctx, re.wait); err != nil {
			return nil, "", err
		}
	}
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// registryTransport dials the registry's own host and port (the user
// named them) at any address, and any other, which only a redirect can
// lead to, at an address allowPrivate or PublicAddr allows: the crawl's
// address policy, so that a registry cannot turn the client against the
// crawling machine or its network.
func registryTransport(base *url.URL, allowPrivate bool, timeout time.Duration) *http.Transport {
	own := canonicalHostPort(base)
	allow := probe.PublicAddr
	if allowPrivate {
		allow = probe.AnyAddr
	}
	guarded := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second,
		Control: (&probe.Options{AllowAddr: allow}).DialControl}
	open := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		// No proxy: the address policy needs the real peer.
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == own {
				return open.DialContext(ctx, network, addr)
			}
			c, err := guarded.DialContext(ctx, network, addr)
			if errors.Is(err, probe.ErrBlocked) {
				return nil, fmt.Errorf("%s: %w; --allow-private lets the registry redirect there", addr, probe.ErrBlocked)
			}
			return c, err
		},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
}

// canonicalHostPort is u's host and port as the transport dials them.
func canonicalHostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// registryRedirect refuses a redirect to another scheme than the
// registry's (https to http above all) and more than probe.MaxRedirects.
func registryRedirect(base *url.URL) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		switch {
		case req.URL.Scheme != base.Scheme:
			return fmt.Errorf("redirect from %s to %s refused: another scheme", probe.Redact(via[0].URL), probe.Redact(req.URL))
		case len(via) >= probe.MaxRedirects:
			return fmt.Errorf("more than %d redirects", probe.MaxRedirects)
		}
		return nil
	}
}

func getRegistryPage(ctx context.Context, opt *RegistryOptions, u string) ([]json.RawMessage, string, error) {
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", opt.UserAgent)
	resp, err := opt.Client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, "", fmt.Errorf("no answer within %v", opt.Timeout)
		}
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		return nil, "", &errRetry{wait: retryAfter(resp.Header.Get("Retry-After"), time.Now()), err: fmt.Errorf("HTTP %d", resp.StatusCode)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRegistryPageBytes+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, "", fmt.Errorf("no complete answer within %v", opt.Timeout)
		}
		return nil, "", err
	}
	if len(body) > maxRegistryPageBytes {
		return nil, "", fmt.Errorf("a page of more than %d bytes", maxRegistryPageBytes)
	}
	var p registryPage
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err := json.Unmarshal(body, &p); err != nil || p.Servers == nil {
		return nil, "", fmt.Errorf("not an answer of the registry's list API (Content-Type %q, want JSON with a \"servers\" list; is the URL the registry's base?)", mt)
	}
	next := ""
	if p.Metadata.NextCursor != nil {
		next = *p.Metadata.NextCursor
	}
	return *p.Servers, next, nil
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return defaultRetryAfterNoHint
	}
	if s, err := strconv.Atoi(v); err == nil {
		return time.Duration(min(max(s, 0), 1<<20)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return defaultRetryAfterNoHint
}
