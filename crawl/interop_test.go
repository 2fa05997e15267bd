package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// The interoperability findings against servers not written here, each
// reproduced with the SDK's own servers on loopback.

func probeOnce(t *testing.T, opt probe.Options, rawURL string) probe.Result {
	t.Helper()
	if opt.Timeout == 0 {
		opt.Timeout = 60 * time.Second
	}
	if opt.AllowAddr == nil {
		opt.AllowAddr = loopback
	}
	p := probe.NewProber(opt)
	defer p.Close()
	return p.Probe(context.Background(), mustURL(t, rawURL))
}

// bigTools are 5,000 tools whose tools/list answer is about 21 MB: past
// the SDK's 16 MiB cap on one server-sent event.
func bigTools() []crawltest.Tool {
	tools := crawltest.GenTools(5000, "big")
	for i := range tools {
		tools[i].Description = strings.Repeat(fmt.Sprintf("tool %04d reads a file path. ", i), 200)[:4200]
	}
	return tools
}

func TestProbeAnswerPast16MiB(t *testing.T) {
	if testing.Short() || raceEnabled {
		// The same code paths run, with small answers, in the race
		// detector's other tests; 21 MB under it takes minutes.
		t.Skip("a 21 MB answer: not under -short or the race detector")
	}
	tools := bigTools()
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
			r := probeOnce(t, probe.Options{MaxTools: 10000}, u)
			if !r.Reachable || len(r.Tools) != len(tools) {
				t.Fatalf("reachable=%v %s %s, %d tools; want all %d", r.Reachable, r.ErrorKind, r.Error, len(r.Tools), len(tools))
			}
			if got, want := string(r.Tools[4999]), string(tools[4999].Served(t)); got != want {
				t.Errorf("last tool %.80s..., want %.80s...", got, want)
			}
			capped := probeOnce(t, probe.Options{MaxTools: 10000, MaxBytes: 16 << 20}, u)
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
			r := probeOnce(t, probe.Options{}, ts.URL+"/sse")
			if !r.Reachable || r.Transport != probe.TransportStreamable || len(r.Tools) != len(tools) {
				t.Fatalf("reachable=%v transport %q %s %s, %d tools", r.Reachable, r.Transport, r.ErrorKind, r.Error, len(r.Tools))
			}
		})
	}
}

func TestProbeKeepsInitialize(t *testing.T) {
	instr := "Use the tools with care."
	cases := []struct {
		name      string
		url       func(t *testing.T) string
		reachable bool
		kind      string
		tools     int
		toolsCap  bool
		caps      string
		instr     *string
	}{
		{name: "SDK server with instructions", url: func(t *testing.T) string {
			s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1.2.3"}, &mcp.ServerOptions{Instructions: instr})
			for _, tl := range crawltest.GenTools(2, "i") {
				s.AddTool(tl.SDKTool(), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
			}
			return crawltest.Serve(t, crawltest.MCPHandler(s)).URL
		}, reachable: true, tools: 2, toolsCap: true, caps: `"tools":{"listChanged":true}`, instr: &instr},
		{name: "SDK server without tools", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.MCPHandler(crawltest.NewSDKServer(nil, 0))).URL
		}, reachable: true, tools: 0, toolsCap: false},
		{name: "no tools capability, tools/list refused", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.Scripted(map[string]string{
				"initialize": `{"protocolVersion":"2025-03-26","capabilities":{"prompts":{}},"serverInfo":{"name":"hand-written","version":"0"}}`,
			})).URL
		}, reachable: true, tools: 0, toolsCap: false, caps: `{"prompts":{}}`},
		{name: "tools/list fails after initialize", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.Scripted(map[string]string{"initialize": crawltest.InitResult})).URL
		}, kind: probe.KindRPCError, toolsCap: true, caps: `{"tools":{}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := probeOnce(t, probe.Options{}, c.url(t))
			if r.Reachable != c.reachable || r.ErrorKind != c.kind || len(r.Tools) != c.tools {
				t.Fatalf("reachable=%v kind %q (%s) %d tools; want %v %q %d", r.Reachable, r.ErrorKind, r.Error, len(r.Tools), c.reachable, c.kind, c.tools)
			}
			if !r.Initialized || r.Transport != probe.TransportStreamable || r.ProtocolVersion == "" || len(r.ServerInfo) == 0 {
				t.Errorf("initialize not kept: %+v", r)
			}
			if r.ToolsCapability != c.toolsCap || !strings.Contains(string(r.Capabilities), c.caps) {
				t.Errorf("tools capability %v, capabilities %s; want %v with %s", r.ToolsCapability, r.Capabilities, c.toolsCap, c.caps)
			}
			if (r.Instructions == nil) != (c.instr == nil) || (c.instr != nil && *r.Instructions != *c.instr) {
				t.Errorf("instructions %v, want %v", r.Instructions, c.instr)
			}
			e := newEntry(&target{id: "x", url: "x"}, &r)
			b, _ := json.Marshal(e.Server)
			for _, key := range []string{`"transport":`, `"protocol_version":`, `"server_info":`, `"capabilities":`, fmt.Sprintf(`"tools_capability":%v`, c.toolsCap)} {
				if !strings.Contains(string(b), key) {
					t.Errorf("record %s lacks %s", b, key)
				}
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
			r := probeOnce(t, probe.Options{}, ts.URL+"/mcp")
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
	r := probeOnce(t, probe.Options{}, ts.URL)
	want := `{"name":"t","description":"A` + "\uFFFD\uFFFDB\uFFFDC" + `","inputSchema":{"type":"object"}}`
	if !r.Reachable || len(r.Tools) != 1 || string(r.Tools[0]) != want {
		t.Fatalf("reachable=%v %s: %q, want %q", r.Reachable, r.Error, r.Tools, want)
	}
}
