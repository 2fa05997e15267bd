//lint:file-ignore SA1019 sampling is deprecated in the newest protocol revision, but a proxy must still translate it for the older ones.

package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// only2026 is the Go SDK 1.8's stateless handler refusing every request
// of an older revision with -32022, as a server of 2026-07-28 alone does.
// Its server/discover names the older revisions all the same (the SDK
// lists every revision it knows): the inconsistent upstream.
func only2026(t *testing.T, srv *mcp.Server) string {
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	return newLoopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Protocol-Version") < statelessVersion {
			var req struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&req)
			if len(req.ID) == 0 {
				req.ID = json.RawMessage("null")
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":[%q]}}}`, req.ID, statelessVersion)
			return
		}
		stateless.ServeHTTP(w, r)
	}))
}

// elicitTool asks the client for a confirmation the 2026-07-28 way.
func elicitTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "confirm", Description: "ask the user", InputSchema: emptySchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if resp, ok := req.Params.InputResponses["e"]; ok {
				er, ok := resp.(*mcp.ElicitResult)
				if !ok {
					return nil, fmt.Errorf("the input response is %T", resp)
				}
				return textResult(fmt.Sprintf("%s %v", er.Action, er.Content["ok"])), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"e": &mcp.ElicitParams{Message: "sure?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}}}, nil
		})
}

// TestInputRequiredTranslated: a 2025 client reaches a server of revision
// 2026-07-28 alone, whose tools ask for the client's input the 2026 way,
// through the proxy: the proxy asks the client as its revision does
// (sampling/createMessage, elicitation/create), sends the call again with
// the answers, and the call completes as it does for a 2026 client; a
// client that did not declare the capability gets an error naming it.
// Over both downstreams; the upstream is also the inconsistent one (its
// discover names 2025 revisions, its initialize refuses them).
func TestInputRequiredTranslated(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "only2026", Version: "1"}, nil)
	samplingTool(srv)
	elicitTool(srv)
	up := only2026(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	direct := connectVersion(t, &mcp.StreamableClientTransport{Endpoint: up}, nil, "")
	if v := direct.InitializeResult().ProtocolVersion; v != statelessVersion {
		t.Fatalf("a 2026 client negotiated %q directly", v)
	}
	for _, down := range []string{"http", "stdio"} {
		t.Run(down, func(t *testing.T) {
			p := newProxy(t, Upstream{URL: up}, Policy{})
			transport := func() mcp.Transport {
				if down == "stdio" {
					return stdioClient(t, p)
				}
				return &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
			}
			opts := &mcp.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					in := req.Params.Messages[0].Content.(*mcp.TextContent).Text
					return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled " + in}}, nil
				},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
				},
			}
			cs := connectVersion(t, transport(), opts, "2025-11-25")
			if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
				t.Fatalf("negotiated %q", v)
			}
			for _, c := range []struct{ tool, want string }{
				{"sample", "got sampled hello"},
				{"confirm", "accept true"},
			} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{}})
				if err != nil || res.IsError || len(res.Content) == 0 {
					t.Errorf("%s: %v %+v", c.tool, err, res)
					continue
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != c.want {
					t.Errorf("%s = %q, want %q", c.tool, got, c.want)
				}
				raw, _ := json.Marshal(res)
				for _, f := range stateless2026Fields {
					if strings.Contains(string(raw), f) {
						t.Errorf("%s: the 2025 session got %s: %s", c.tool, f, raw)
					}
				}
			}
			// No elicitation handler: the capability is not declared.
			bare := connectVersion(t, transport(), &mcp.ClientOptions{CreateMessageHandler: opts.CreateMessageHandler}, "2025-11-25")
			_, err := bare.CallTool(ctx, &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{}})
			if err == nil || !strings.Contains(err.Error(), "elicitation/create") || !strings.Contains(err.Error(), `"elicitation" capability`) {
				t.Errorf("confirm without the capability: %v, want an error naming elicitation/create and the capability", err)
			}
		})
	}
}

// TestInconsistentUpstream: an upstream whose server/discover names the
// 2025 revisions but whose initialize refuses them (-32022) is bridged:
// a 2025 client's session opens and its calls are answered, translated.
func TestInconsistentUpstream(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "only2026", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "echo the text", InputSchema: echoSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			json.Unmarshal(req.Params.Arguments, &a)
			return textResult(a.Text), nil
		})
	p := newProxy(t, Upstream{URL: only2026(t, srv)}, Policy{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		cs := connectVersion(t, &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}, nil, v)
		if got := cs.InitializeResult().ProtocolVersion; got != v {
			t.Errorf("negotiated %q, want %q", got, v)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": v}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != v {
			t.Errorf("%s: echo %v %+v", v, err, res)
		}
	}
	if n := testCounter(t, p, "atlas_proxy_sessions_translated_total", ""); n != 2 {
		t.Errorf("%v sessions translated, want 2", n)
	}
}

// TestStatelessOverStdio: a client of revision 2026-07-28 reaches a stdio
// upstream that speaks it (the Go SDK 1.8 server, the test binary) through
// the proxy's HTTP downstream as 2026: it negotiates 2026-07-28, and its
// results keep resultType and the server's info in _meta; two clients'
// calls of the same id over the one link each get their own answer; a
// tools/list is labelled.
func TestStatelessOverStdio(t *testing.T) {
	p := newProxy(t, stdioUpstream(t), Policy{})
	url := serveHTTP(t, p) + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var sessions []*mcp.ClientSession
	var recs []*recorder
	for range 2 {
		cs, rec := samplingClient(t, &mcp.StreamableClientTransport{Endpoint: url}, "")
		if v := cs.InitializeResult().ProtocolVersion; v != statelessVersion {
			t.Fatalf("negotiated %q through the proxy, want %s", v, statelessVersion)
		}
		sessions, recs = append(sessions, cs), append(recs, rec)
	}
	for i, cs := range sessions {
		text := fmt.Sprintf("client %d", i)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != text {
			t.Fatalf("echo: %v %+v", err, res)
		}
		raw := recs[i].last("tools/call")
		for _, f := range []string{`"resultType":"complete"`, `"io.modelcontextprotocol/serverInfo"`} {
			if !strings.Contains(string(raw), f) {
				t.Errorf("the 2026 result lost %s: %s", f, raw)
			}
		}
	}
	tools, err := sessions[0].ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 || tools.Tools[0].Meta[MetaKey] == nil {
		t.Errorf("tools/list over the link: %v, first tool unlabelled", err)
	}
}

// TestStatelessOverStdioPolicy: the policy holds for a 2026 client over
// the link: a denied tool's call is refused, another runs.
func TestStatelessOverStdioPolicy(t *testing.T) {
	p := newProxy(t, stdioUpstream(t), Policy{Deny: []string{"command-string"}})
	cs := connectVersion(t, &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}, nil, "")
	if v := cs.InitializeResult().ProtocolVersion; v != statelessVersion {
		t.Fatalf("negotiated %q", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
		t.Errorf("echo: %v %+v", err, res)
	}
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"command": "ls"}})
	if err == nil || !strings.Contains(err.Error(), "command-string") {
		t.Errorf("run: %v, want the policy's refusal naming the class", err)
	}
}
