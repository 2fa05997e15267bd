package crawl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
)

func TestParseCandidates(t *testing.T) {
	good := "# a comment\n{\"url\": \"https://a.example/mcp\", \"source\": \"x\"}\n\nhttps://b.example/sse?a=1&b=<2>\n{\"url\":\"https://c.example/?a=1&b=2\"}\n"
	cs, err := ParseCandidates(strings.NewReader(good), "c.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line      int
		url, recd string
	}{
		{2, "https://a.example/mcp", `{"url": "https://a.example/mcp", "source": "x"}`},
		{4, "https://b.example/sse?a=1&b=<2>", `{"url": "https://b.example/sse?a=1&b=<2>"}`},
		{5, "https://c.example/?a=1&b=2", `{"url":"https://c.example/?a=1&b=2"}`},
	}
	if len(cs) != len(want) {
		t.Fatalf("%d candidates: %+v", len(cs), cs)
	}
	for i, w := range want {
		if cs[i].Line != w.line || cs[i].URL != w.url || string(cs[i].Record) != w.recd {
			t.Errorf("candidate %d: %d %q %s, want %d %q %s", i, cs[i].Line, cs[i].URL, cs[i].Record, w.line, w.url, w.recd)
		}
	}
	for _, bad := range []struct{ in, err string }{
		{"https://a/\n{\"url\": 5}\n", "c.jsonl:2: no string \"url\""},
		{"{\"url\": \"x\"\n", "c.jsonl:1: not a JSON object"},
		{"https://a/ b\n", "c.jsonl:1: neither"},
		{"\n# only a comment\n", "no candidates"},
	} {
		if _, err := ParseCandidates(strings.NewReader(bad.in), "c.jsonl"); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%q: %v, want %q", bad.in, err, bad.err)
		}
	}
}

// TestPerHostScheduling: a host with more candidates than the pool has
// workers does not starve the others, and never has more than PerHost
// probes in flight. Host A's servers answer only once host B's has been
// asked; a crawl that made B wait behind A would time A out.
func TestPerHostScheduling(t *testing.T) {
	bSeen := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	inflight, most := 0, 0
	tools := crawltest.GenTools(2, "a")
	a := crawltest.MCPHandler(crawltest.NewSDKServer(tools, 0))
	ts := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A probe lies between its initialize and its session's DELETE.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"initialize"`)) {
			mu.Lock()
			inflight++
			most = max(most, inflight)
			mu.Unlock()
		}
		if r.Method == http.MethodDelete {
			defer func() { mu.Lock(); inflight--; mu.Unlock() }()
		}
		select {
		case <-bSeen:
		case <-r.Context().Done():
			return
		}
		a.ServeHTTP(w, r)
	}))
	b := crawltest.MCPHandler(crawltest.NewSDKServer(tools, 0))
	tb := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(bSeen) })
		b.ServeHTTP(w, r)
	}))
	var lines []string
	for i := range 6 {
		lines = append(lines, ts.URL+"/mcp/"+string(rune('a'+i)))
	}
	lines = append(lines, tb.URL)
	opt := Options{Candidates: writeCandidates(t, lines), Out: t.TempDir(), Concurrency: 3, PerHost: 1,
		Probe: probe.Options{Timeout: 20 * time.Second, AllowAddr: crawltest.Loopback}}
	sum, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reachable != 7 {
		t.Errorf("%d reachable, want 7", sum.Reachable)
	}
	if most != 1 {
		t.Errorf("%d probes in flight on one host at once, want at most 1 (PerHost)", most)
	}
}

// TestProgress: progress counts the reachable and unreachable servers, the
// resumed ones included.
func TestProgress(t *testing.T) {
	good := crawltest.StreamableServer(t, crawltest.GenTools(2, "p"), 0, true)
	cands := writeCandidates(t, []string{good.URL, crawltest.Serve(t, crawltest.Status(500)).URL})
	out := t.TempDir()
	var calls []string
	opt := Options{Candidates: cands, Out: out, Probe: fleetProbe, Progress: func(r progress.Report) {
		calls = append(calls, fmt.Sprintf("%d reachable, %d unreachable of %d", r.Done-r.Failed, r.Failed, r.Total))
	}}
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[1] != "1 reachable, 1 unreachable of 2" {
		t.Errorf("progress %q", calls)
	}
	calls = nil
	if _, err := Run(context.Background(), opt); err != nil { // all resumed
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[1] != "1 reachable, 1 unreachable of 2" {
		t.Errorf("resumed progress %q", calls)
	}
}
