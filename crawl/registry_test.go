package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
)

// standInRegistry serves the MCP Registry's list API (GET /v0.1/servers)
// over entries, in the API's real shapes: {"servers": [{"server": {...},
// "_meta": {"io.modelcontextprotocol.registry/official": {...}}}],
// "metadata": {"nextCursor": ..., "count": ...}}, pageSize entries a page.
// Its cursors hold characters that must be escaped in a query, so a client
// that does not pass them back exactly fails. tooMany makes the first
// request of each page answer 429 first.
type standInRegistry struct {
	entries  []map[string]any
	pageSize int
	tooMany  bool

	mu       sync.Mutex
	requests []string // the raw queries, in order
	limited  map[string]bool
}

func (sr *standInRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v0.1/servers" {
		http.NotFound(w, r)
		return
	}
	sr.mu.Lock()
	sr.requests = append(sr.requests, r.URL.RawQuery)
	if sr.limited == nil {
		sr.limited = map[string]bool{}
	}
	cursor := r.URL.Query().Get("cursor")
	if sr.tooMany && !sr.limited[cursor] {
		sr.limited[cursor] = true
		sr.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":"rate limited"}`, http.StatusTooManyRequests)
		return
	}
	sr.mu.Unlock()
	start := 0
	if cursor != "" {
		if _, err := fmt.Sscanf(cursor, "p=%d&+/ é", &start); err != nil {
			http.Error(w, `{"error":"bad cursor"}`, http.StatusBadRequest)
			return
		}
	}
	end := min(start+sr.pageSize, len(sr.entries))
	page := map[string]any{"servers": sr.entries[start:end], "metadata": map[string]any{"count": end - start}}
	if end < len(sr.entries) {
		page["metadata"].(map[string]any)["nextCursor"] = fmt.Sprintf("p=%d&+/ é", end)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(page)
}

// regEntry builds a list entry: remotes are (type, url) pairs; a type
// prefixed "old:" uses the older transportType key.
func regEntry(name, version, status string, latest bool, published string, remotes ...map[string]any) map[string]any {
	official := map[string]any{"publishedAt": published, "updatedAt": published, "isLatest": latest}
	if status != "" {
		official["status"] = status
	}
	return map[string]any{
		"server": map[string]any{"$schema": "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
			"name": name, "description": "d", "version": version, "remotes": remotes},
		"_meta": map[string]any{"io.modelcontextprotocol.registry/official": official},
	}
}

func remote(typ, u string) map[string]any {
	if old, ok := strings.CutPrefix(typ, "old:"); ok {
		return map[string]any{"transportType": old, "url": u}
	}
	return map[string]any{"type": typ, "url": u}
}

func registryFixture() []map[string]any {
	withHeader := remote("streamable-http", "https://h.example/mcp")
	withHeader["headers"] = []map[string]any{{"name": "X-Api-Key", "isRequired": true, "isSecret": true}, {"name": "X-Opt"}}
	tmplOK := remote("streamable-http", "https://{tenant}.t.example/mcp")
	tmplOK["variables"] = map[string]any{"tenant": map[string]any{"default": "public"}}
	tmplNo := remote("sse", "https://{region}.t.example/sse")
	tmplNo["variables"] = map[string]any{"region": map[string]any{"description": "no default"}}
	return []map[string]any{
		regEntry("io.example/a", "1.0.0", "active", false, "2025-01-01T00:00:00Z", remote("streamable-http", "https://a.example/old")),
		regEntry("io.example/b", "0.1.0", "", true, "2025-01-02T00:00:00Z", remote("old:sse", "https://B.example:443/sse"), withHeader),
		regEntry("io.example/a", "1.1.0", "active", true, "2025-02-01T00:00:00Z", remote("streamable-http", "https://a.example/mcp")),
		regEntry("io.example/gone", "2.0.0", "deleted", true, "2025-01-03T00:00:00Z", remote("streamable-http", "https://gone.example/mcp")),
		regEntry("io.example/old", "2.0.0", "deprecated", true, "2025-01-03T00:00:00Z", remote("streamable-http", "https://old.example/mcp")),
		regEntry("io.example/dup", "1.0.0", "active", true, "2025-01-04T00:00:00Z", remote("streamable-http", "https://b.example/sse")),
		regEntry("io.example/tmpl", "1.0.0", "active", true, "2025-01-05T00:00:00Z", tmplOK, tmplNo),
		regEntry("io.example/stdio", "1.0.0", "active", true, "2025-01-06T00:00:00Z"),
		regEntry("io.example/cred", "1.0.0", "active", true, "2025-01-07T00:00:00Z", remote("streamable-http", "https://u:secret@c.example/mcp")),
		regEntry("io.example/ws", "1.0.0", "active", true, "2025-01-08T00:00:00Z", remote("websocket", "wss://w.example/")),
	}
}

func TestFetchRegistry(t *testing.T) {
	sr := &standInRegistry{entries: registryFixture(), pageSize: 3, tooMany: true}
	ts := crawltest.Serve(t, sr)
	cands, st, err := FetchRegistry(context.Background(), RegistryOptions{URL: ts.URL + "/", UpdatedSince: "2025-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	reg := ts.URL
	want := []string{
		`{"url": "https://B.example:443/sse", "transport": "sse", "registry": "` + reg + `", "name": "io.example/b", "version": "0.1.0"}`,
		`{"url": "https://h.example/mcp", "transport": "streamable-http", "registry": "` + reg + `", "name": "io.example/b", "version": "0.1.0", "headers_required": ["X-Api-Key"]}`,
		`{"url": "https://a.example/mcp", "transport": "streamable-http", "registry": "` + reg + `", "name": "io.example/a", "version": "1.1.0"}`,
		`{"url": "https://public.t.example/mcp", "transport": "streamable-http", "registry": "` + reg + `", "name": "io.example/tmpl", "version": "1.0.0"}`,
		`{"url": "https://c.example/mcp", "transport": "streamable-http", "registry": "` + reg + `", "name": "io.example/cred", "version": "1.0.0"}`,
	}
	// Names in order of first listing: a (latest 1.1.0) comes first.
	want[0], want[1], want[2] = want[2], want[0], want[1]
	if len(cands) != len(want) {
		t.Fatalf("%d candidates, want %d: %+v", len(cands), len(want), cands)
	}
	for i, w := range want {
		if string(cands[i].Record) != w {
			t.Errorf("candidate %d:\n got %s\nwant %s", i, cands[i].Record, w)
		}
		var rec map[string]any
		if err := json.Unmarshal(cands[i].Record, &rec); err != nil || rec["url"] != cands[i].URL {
			t.Errorf("candidate %d: record %s does not parse to its URL %q (%v)", i, cands[i].Record, cands[i].URL, err)
		}
	}
	wantSkipped := map[string]int{
		"status deleted": 1, "status deprecated": 1, skipDuplicate: 1, skipTemplated: 1, skipNoRemotes: 1, skipTransport: 1,
	}
	if fmt.Sprint(st.Skipped) != fmt.Sprint(wantSkipped) || st.Pages != 4 || st.Entries != 10 || st.Names != 9 || st.Kept != 5 {
		t.Errorf("stats %+v, want skipped %v, 4 pages, 10 entries, 9 names, 5 kept", st, wantSkipped)
	}
	// Each page was asked twice (429 first), the cursor passed back
	// exactly, escaped, with the filter on every page.
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if len(sr.requests) != 8 {
		t.Fatalf("%d requests, want 8: %q", len(sr.requests), sr.requests)
	}
	for i, q := range sr.requests {
		if !strings.Contains(q, "limit=100") || !strings.Contains(q, "updated_since=2025-01-01T00%3A00%3A00Z") {
			t.Errorf("request %d: %q", i, q)
		}
	}
	if q := sr.requests[2]; !strings.Contains(q, "cursor=p%3D3%26%2B%2F+%C3%A9") {
		t.Errorf("second page asked with %q", q)
	}
}

func TestFetchRegistryErrors(t *testing.T) {
	html := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>registry home</html>")
	})
	loop := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"servers":[],"metadata":{"nextCursor":"same"}}`)
	})
	endless := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"servers":[],"metadata":{"nextCursor":"c%s"}}`, r.URL.Query().Get("cursor"))
	})
	slow := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	cases := []struct {
		name string
		h    http.Handler
		opt  RegistryOptions
		err  string
	}{
		{"a web page", html, RegistryOptions{}, `page 1: not an answer of the registry's list API (Content-Type "text/html"`},
		{"not found", crawltest.Status(404), RegistryOptions{}, "page 1: HTTP 404"},
		{"a cursor loop", loop, RegistryOptions{}, `page 2: nextCursor "same" was returned before`},
		{"endless pages", endless, RegistryOptions{MaxPages: 5}, "more than 5 pages"},
		{"a Retry-After past the limit", slow, RegistryOptions{MaxWait: time.Minute}, "Retry-After 1h0m0s is longer than the 1m0s allowed"},
		{"a bad time", loop, RegistryOptions{UpdatedSince: "yesterday"}, "not an RFC 3339 time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opt.URL = crawltest.Serve(t, c.h).URL
			_, _, err := FetchRegistry(context.Background(), c.opt)
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("%v, want an error with %q", err, c.err)
			}
		})
	}
	t.Run("hangs", func(t *testing.T) {
		u := crawltest.ServeHanging(t, crawltest.Hanging).URL
		_, _, err := FetchRegistry(context.Background(), RegistryOptions{URL: u, Timeout: 200 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
			t.Fatalf("%v", err)
		}
	})
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0}, {"7", 7 * time.Second}, {"", defaultRetryAfterNoHint}, {"soon", defaultRetryAfterNoHint},
		{"Thu, 01 Jan 2026 00:00:30 GMT", 30 * time.Second}, {"Wed, 31 Dec 2025 23:00:00 GMT", 0}, {"-5", 0},
	} {
		t.Run(c.in, func(t *testing.T) {
			if got := retryAfter(c.in, now); got != c.want {
				t.Errorf("%v, want %v", got, c.want)
			}
		})
	}
}

func TestWriteCandidatesNoPartialFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.jsonl")
	cands := []Candidate{{URL: "https://a/", Record: []byte(`{"url": "https://a/"}`)}}
	if err := WriteCandidates(file, cands); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	if string(b) != "{\"url\": \"https://a/\"}\n" {
		t.Errorf("%q", b)
	}
	if err := WriteCandidates(filepath.Join(dir, "missing", "c.jsonl"), cands); err == nil {
		t.Error("writing into a missing folder succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files left in the folder, want the one written", len(entries))
	}
}

// TestFetchRegistryAddressPolicy: the registry's own host and port are
// reached at any address (the user named them), but a redirect to another
// port on loopback is refused unless AllowPrivate, and one to another
// scheme always.
func TestFetchRegistryAddressPolicy(t *testing.T) {
	target := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"servers":[],"metadata":{}}`)
	}))
	redirect := func(to string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to+r.URL.RequestURI(), http.StatusFound)
		})
	}
	samePort := http.NewServeMux()
	samePort.HandleFunc("/v0.1/servers", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("moved") == "" {
			http.Redirect(w, r, r.URL.Path+"?moved=1&"+r.URL.RawQuery, http.StatusFound)
			return
		}
		fmt.Fprint(w, `{"servers":[],"metadata":{}}`)
	})
	for _, c := range []struct {
		name         string
		h            http.Handler
		allowPrivate bool
		err          string
	}{
		{"same origin", samePort, false, ""},
		{"another port", redirect(target.URL), false, "address not allowed"},
		{"another port, allowed", redirect(target.URL), true, ""},
		{"another scheme", redirect(strings.Replace(target.URL, "http://", "https://", 1)), true, "another scheme"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := crawltest.Serve(t, c.h).URL
			_, _, err := FetchRegistry(context.Background(), RegistryOptions{URL: u, AllowPrivate: c.allowPrivate})
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("FetchRegistry: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("err = %v, want one saying %q", err, c.err)
			}
			if c.err == "address not allowed" && !strings.Contains(err.Error(), "--allow-private") {
				t.Errorf("the error does not name --allow-private: %v", err)
			}
		})
	}
}

// TestFetchRegistryWaitCapped: a registry that answers 429 with the
// longest Retry-After allowed, again and again, is given up once the
// pauses of a page, or of the whole read, would pass their caps; the
// pauses are counted, not slept.
func TestFetchRegistryWaitCapped(t *testing.T) {
	// Each page is limited once (Retry-After 100 s), then served.
	var mu sync.Mutex
	limited := map[string]bool{}
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur := r.URL.Query().Get("cursor")
		mu.Lock()
		first := !limited[cur]
		limited[cur] = true
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "100")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprintf(w, `{"servers":[],"metadata":{"nextCursor":"c%s"}}`, cur)
	})
	always := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "100")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	for _, c := range []struct {
		name string
		h    http.Handler
		err  string
		want time.Duration
	}{
		{"per page", always, "would make this page wait more than the 2m0s allowed", 100 * time.Second},
		{"in all", pages, "would make the read wait more than the 10m0s allowed in all", 600 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			var slept time.Duration
			opt := RegistryOptions{URL: crawltest.Serve(t, c.h).URL, sleep: func(_ context.Context, d time.Duration) error { slept += d; return nil }}
			_, _, err := FetchRegistry(context.Background(), opt)
			if err == nil || !strings.Contains(err.Error(), c.err) || slept != c.want {
				t.Fatalf("err = %v after %v of pauses; want %q after %v", err, slept, c.err, c.want)
			}
		})
	}
}
