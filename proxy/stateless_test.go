package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessUpstream is a Go SDK v1.8 server that speaks only revision
// 2026-07-28, stateless, over Streamable HTTP; scope is the cacheScope of
// its tools/list results.
func statelessUpstream(t *testing.T, scope string) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{statelessVersion},
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 60000, scope
		},
	})
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "echo the text", InputSchema: echoSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("echoed"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "run", Description: "run a command", InputSchema: runSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("ran"), nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	return newLoopbackServer(t, h)
}

// TestStateless: a client of revision 2026-07-28 reaches a server that
// speaks only it through the proxy, stateless end to end: discover, a
// labelled tools/list keeping ttlMs and cacheScope, calls, and the policy
// (which lists the tools itself, with the call's _meta, to know the
// classes of the tool a stateless call names). A "private" list's labels
// are never cached for another client.
func TestStateless(t *testing.T) {
	for _, scope := range []string{"public", "private"} {
		t.Run(scope, func(t *testing.T) {
			p := newProxy(t, Upstream{URL: statelessUpstream(t, scope)}, Policy{Deny: []string{"command-string"}})
			rtr, rec := record(&mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"})
			cs := connectClient(t, rtr, nil)
			if v := cs.InitializeResult().ProtocolVersion; v != statelessVersion {
				t.Fatalf("negotiated %q, want %s", v, statelessVersion)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			for range 2 {
				if _, err := cs.ListTools(ctx, nil); err != nil {
					t.Fatal(err)
				}
			}
			list := rec.last("tools/list")
			if !bytes.Contains(list, []byte(`"ttlMs":60000`)) || !bytes.Contains(list, []byte(`"cacheScope":"`+scope+`"`)) {
				t.Errorf("tools/list lost ttlMs or cacheScope: %s", list)
			}
			for _, tool := range toolsOf(t, list) {
				if labelsOf(t, tool) == nil {
					t.Errorf("unlabelled: %s", tool)
				}
			}
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
				t.Errorf("echo: %v %+v", err, res)
			}
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"command": "ls"}})
			if e := rec.lastError("tools/call"); err == nil || e == nil || e.Code != CodeDenied || !strings.Contains(e.Message, "gg:command-string") {
				t.Errorf("run: %v %+v, want refused naming gg:command-string", err, e)
			}
			hits := testCounter(t, p, "atlas_proxy_label_cache_hits_total", "")
			if (hits == 0) != (scope == "private") {
				t.Errorf("%v label cache hits for %s lists", hits, scope)
			}
		})
	}
}

// newLoopbackServer serves h on loopback for the test and returns its URL.
func newLoopbackServer(t *testing.T, h http.Handler) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestBridge: a client of an older revision (initialize, a session)
// reaches a server that speaks only 2026-07-28 through the proxy: the
// proxy's upstream client tries server/discover first and bridges, over
// either downstream.
func TestBridge(t *testing.T) {
	p := newProxy(t, Upstream{URL: statelessUpstream(t, "public")}, Policy{Deny: []string{"command-string"}})
	for _, down := range []string{"http", "stdio"} {
		t.Run(down, func(t *testing.T) {
			var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
			if down == "stdio" {
				tr = stdioClient(t, p)
			}
			rtr, rec := record(tr)
			cs := connectVersion(t, rtr, nil, "2025-06-18")
			if v := cs.InitializeResult().ProtocolVersion; v != "2025-06-18" {
				t.Errorf("negotiated %q", v)
			}
			if s := cs.InitializeResult().ServerInfo; s == nil || s.Name != "stateless" {
				t.Errorf("server info %+v", s)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			tools := toolsOf(t, rec.last("tools/list"))
			if len(tools) != 2 || labelsOf(t, tools[0]) == nil {
				t.Errorf("tools/list %s", rec.last("tools/list"))
			}
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
				t.Errorf("echo: %v %+v", err, res)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{}}); err == nil {
				t.Error("run was not refused")
			}
			// Translated: the client's revision has none of the members
			// the stateless one added, and the proxy counts the session.
			for _, m := range []string{"tools/list", "tools/call"} {
				for _, f := range stateless2026Fields {
					if bytes.Contains(rec.last(m), []byte(f)) {
						t.Errorf("%s of a 2025 session has %s: %s", m, f, rec.last(m))
					}
				}
			}
			if n := testCounter(t, p, "atlas_proxy_sessions_translated_total", ""); n < 1 {
				t.Errorf("%v sessions translated", n)
			}
		})
	}
}

// TestLegacyResult: what a translated session's client is given.
func TestLegacyResult(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{`{"content":[],"resultType":"complete"}`, `{"content":[]}`, ""},
		{`{"tools":[],"ttlMs":5,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}}}`, `{"tools":[]}`, ""},
		{`{"a":1,"_meta":{"io.modelcontextprotocol/serverInfo":{},"vendor/x":1}}`, `{"_meta":{"vendor/x":1},"a":1}`, ""},
		{`{"a" : 1}`, `{"a" : 1}`, ""},
		{`{"resultType":"input_required","inputRequests":{}}`, "", "input_required"},
	} {
		got, rerr := legacyResult(json.RawMessage(c.in))
		switch {
		case c.err != "" && (rerr == nil || !strings.Contains(rerr.Message, c.err)):
			t.Errorf("%s: error %v, want one naming %s", c.in, rerr, c.err)
		case c.err == "" && (rerr != nil || string(got) != c.want):
			t.Errorf("%s: %s %v, want %s", c.in, got, rerr, c.want)
		}
	}
}
