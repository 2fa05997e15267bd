package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStatelessOverSSE: a client of revision 2026-07-28 through the proxy
// to a legacy HTTP+SSE upstream. One that names 2026-07-28 in its
// discover is reached as 2026 over the link: the client negotiates
// 2026-07-28, its results keep resultType and the server's info, a second
// client over the same link (its calls of the same ids) gets its own
// answers, a tools/list is labelled and the policy holds. The Go SDK's own SSE server, which
// does not name it on that transport, gets the client in a 2025 session
// instead, the client falling back by itself.
func TestStatelessOverSSE(t *testing.T) {
	pol := Policy{Deny: []string{"command-string"}}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	check := func(t *testing.T, cs *mcp.ClientSession, rec *recorder, text string, fields bool) {
		t.Helper()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) == 0 {
			t.Fatalf("tools/list: %v", err)
		}
		for _, tool := range tools.Tools {
			if tool.Meta[MetaKey] == nil {
				t.Errorf("tool %s unlabelled", tool.Name)
			}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != text {
			t.Fatalf("echo: %v %+v", err, res)
		}
		raw := string(rec.last("tools/call"))
		for _, f := range []string{`"resultType":"complete"`, `"io.modelcontextprotocol/serverInfo"`} {
			if strings.Contains(raw, f) != fields {
				t.Errorf("%s in the result: %v, want %v: %s", f, !fields, fields, raw)
			}
		}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"command": "ls"}})
		if err == nil || !strings.Contains(err.Error(), "gg:command-string") {
			t.Errorf("run: %v, want the policy's refusal naming the class", err)
		}
	}

	t.Run("speaks 2026", func(t *testing.T) {
		p := newProxy(t, Upstream{URL: sseUpstream2026(t, upstreamServer(nil, nil)) + "/sse"}, pol)
		url := serveHTTP(t, p) + "/mcp"
		for i := range 2 {
			cs, rec := samplingClient(t, &mcp.StreamableClientTransport{Endpoint: url}, "")
			if v := cs.InitializeResult().ProtocolVersion; v != statelessVersion {
				t.Fatalf("client %d negotiated %q through the proxy, want %s", i, v, statelessVersion)
			}
			check(t, cs, rec, fmt.Sprintf("client %d", i), true)
		}
		if n := testCounter(t, p, "atlas_proxy_sessions_translated_total", ""); n != 0 {
			t.Errorf("%v sessions translated: the link relays 2026 as it came", n)
		}
	})
	t.Run("Go SDK SSE server, 2025 only there", func(t *testing.T) {
		p := newProxy(t, Upstream{URL: sdkUpstreamSSE(t, upstreamServer(nil, nil)).URL + "/sse"}, pol)
		cs, rec := samplingClient(t, &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}, "")
		if v := cs.InitializeResult().ProtocolVersion; v != legacyVersion {
			t.Fatalf("negotiated %q through the proxy, want the fallback to %s", v, legacyVersion)
		}
		check(t, cs, rec, "fallback", false)
	})
}
