package probe_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// The interoperability findings against servers not written here, each
// reproduced with the SDK's own servers on loopback.

func TestProbeAnswerPast16MiB(t *testing.T) {
	if testing.Short() || raceEnabled {
		// The same code paths run, with small answers, in the race
		// detector's other tests; 21 MB under it takes minutes.
		t.Skip("a 21 MB answer: not under -short or the race detector")
	}
	tools := crawltest.BigTools()
	size := 0
	for _, tl := range tools {
		size += len(tl.Served(t))
	}
	if size < 20_000_000 {
		t.Fatalf("the answer is %d bytes, not past 16 MiB", size)
	}
	s := crawltest.NewSDKServer(tools, len(tools)) // one page: one answer of 21 MB
	servers := map[string]string{
		"legacy SSE": crawltest.Serve(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)).URL + "/sse",
		"streamable HTTP, SSE-framed": crawltest.Serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{})).URL,
		"streamable HTTP, JSON": crawltest.Serve(t, crawltest.MCPHandler(s)).URL,
	}
	for name, u := range servers {
		t.Run(name, func(t *testing.T) {
			r := crawltest.ProbeOnce(t, probe.Options{MaxTools: 10000}, u)
			if !r.Reachable || len(r.Tools) != len(tools) {
				t.Fatalf("reachable=%v %s %s, %d tools; want all %d", r.Reachable, r.ErrorKind, r.Error, len(r.Tools), len(tools))
			}
			if got, want := string(r.Tools[4999]), string(tools[4999].Served(t)); got != want {
				t.Errorf("last tool %.80s..., want %.80s...", got, want)
			}
			capped := crawltest.ProbeOnce(t, probe.Options{MaxTools: 10000, MaxBytes: 16 << 20}, u)
			if capped.Reachable || capped.ErrorKind != probe.KindTooManyBytes {
				t.Errorf("with a 16 MiB cap: reachable=%v kind %q (%s), want %s", capped.Reachable, capped.ErrorKind, capped.Error, probe.KindTooManyBytes)
			}
		})
	}
}

// TestProbeStreamableAtSSEPath: mcp-proxy --streamEndpoint /sse serves
// Streamable HTTP at a path ending in /sse; the legacy GET fails with a
// 4xx and Streamable HTTP is tried next.
func TestProbeStreamableAtSSEPath(t *testing.T) {
	tools := crawltest.GenTools(4, "sse-path")
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			s := crawltest.NewSDKServer(tools, 0)
			ts := crawltest.Serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
				&mcp.StreamableHTTPOptions{Stateless: stateless}))
			r := crawltest.ProbeOnce(t, probe.Options{}, ts.URL+"/sse")
			if !r.Reachable || r.Transport != probe.TransportStreamable || len(r.Tools) != len(tools) {
				t.Fatalf("reachable=%v transport %q %s %s, %d tools", r.Reachable, r.Transport, r.ErrorKind, r.Error, len(r.Tools))
			}
		})
	}
}

// bearerVerifier accepts no token: every request is unauthorized.
func bearerVerifier(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
	return nil, auth.ErrInvalidToken
}

func TestProbeAuthRequired(t *testing.T) {
	const meta = "https://auth.example/.well-known/oauth-protected-resource"
	cases := []struct {
		name, meta string
		handler    func(h http.Handler) http.Handler
	}{
		{name: "SDK bearer middleware", meta: meta, handler: auth.RequireBearerToken(bearerVerifier, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta})},
		{name: "403 with a challenge", meta: "https://x.example/rm?a=1", handler: func(http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp", resource_metadata=https://x.example/rm?a=1`)
				w.WriteHeader(http.StatusForbidden)
			})
		}},
		{name: "401 without a challenge", handler: func(http.Handler) http.Handler { return crawltest.Status(http.StatusUnauthorized) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var requests, gets atomic.Int32
			h := c.handler(crawltest.MCPHandler(crawltest.NewSDKServer(crawltest.GenTools(1, "a"), 0)))
			ts := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				if r.Method == http.MethodGet {
					gets.Add(1)
				}
				h.ServeHTTP(w, r)
			}))
			r := crawltest.ProbeOnce(t, probe.Options{}, ts.URL+"/mcp")
			if r.Reachable || r.ErrorKind != probe.KindAuthRequired || r.ResourceMetadata != c.meta {
				t.Fatalf("reachable=%v kind %q (%s) resource_metadata %q; want %s with %q", r.Reachable, r.ErrorKind, r.Error, r.ResourceMetadata, probe.KindAuthRequired, c.meta)
			}
			if gets.Load() != 0 || requests.Load() != 1 {
				t.Errorf("%d requests, %d GETs after the refusal; want the one POST", requests.Load(), gets.Load())
			}
		})
	}
}

// TestProbeInvalidUTF8: each maximal invalid subsequence of a tools/list
// answer becomes one U+FFFD, as Python's errors="replace" decodes it.
func TestProbeInvalidUTF8(t *testing.T) {
	ts := crawltest.Serve(t, crawltest.Scripted(map[string]string{
		"initialize": crawltest.InitResult,
		"tools/list": "{\"tools\":[{\"name\":\"t\",\"description\":\"A\xff\xfeB\xe2\x82C\",\"inputSchema\":{\"type\":\"object\"}}]}",
	}))
	r := crawltest.ProbeOnce(t, probe.Options{}, ts.URL)
	want := `{"name":"t","description":"A` + "\uFFFD\uFFFDB\uFFFDC" + `","inputSchema":{"type":"object"}}`
	if !r.Reachable || len(r.Tools) != 1 || string(r.Tools[0]) != want {
		t.Fatalf("reachable=%v %s: %q, want %q", r.Reachable, r.Error, r.Tools, want)
	}
}
