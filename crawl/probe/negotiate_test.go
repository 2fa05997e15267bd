package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessOnly is a Go SDK server that speaks only the stateless revision,
// with cache hints on its lists.
func statelessOnly(tools []crawltest.Tool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "stateless-only", Version: "2"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{probe.StatelessVersion},
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 60000, "private"
		},
	})
	for _, t := range tools {
		s.AddTool(t.SDKTool(), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// refusing answers every call with an unsupported-version error in an
// HTTP 400, as a server of a revision the crawl does not know would.
func refusing() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2099-01-01"],"requested":"x"}}}`, msg.ID)
	})
}

// refusingInitialized answers initialize and then refuses its notification.
func refusingInitialized() http.Handler {
	init := crawltest.Scripted(map[string]string{"initialize": crawltest.InitResult})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"notifications/initialized"`) {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		init.ServeHTTP(w, r)
	})
}

// TestNegotiation: the newest revision first, then initialize, then legacy
// SSE; each record keeps what was negotiated, or what failed and why.
func TestNegotiation(t *testing.T) {
	tools := crawltest.GenTools(3, "n")
	ttl, zero := int64(60000), int64(0)
	// A stateful SDK server refuses server/discover with -32022, naming
	// the revisions with a handshake it speaks.
	legacy := slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v == probe.StatelessVersion })
	cases := []struct {
		name       string
		handler    http.Handler
		path       string
		reachable  bool
		transport  string
		version    string
		generation string
		supported  []string
		ttl        *int64
		scope      string
		step       string
		rpcCode    int64
	}{
		{name: "2026-07-28 only, stateless", handler: statelessOnly(tools), reachable: true, transport: probe.TransportStreamable,
			version: probe.StatelessVersion, generation: probe.GenerationStateless, supported: []string{probe.StatelessVersion}, ttl: &ttl, scope: "private"},
		{name: "SDK server with sessions", handler: crawltest.MCPHandler(crawltest.NewSDKServer(tools, 0)), reachable: true, transport: probe.TransportStreamable,
			version: probe.RequestedVersion, generation: probe.GenerationSession, supported: legacy, ttl: &zero, scope: "public"},
		{name: "SDK server, stateless, every revision", handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return crawltest.NewSDKServer(tools, 0) },
			&mcp.StreamableHTTPOptions{Stateless: true}), reachable: true, transport: probe.TransportStreamable,
			version: probe.StatelessVersion, generation: probe.GenerationStateless, supported: mcp.SupportedProtocolVersions(), ttl: &zero, scope: "public"},
		{name: "hand-written 2025-03-26 server", handler: crawltest.Scripted(map[string]string{"initialize": crawltest.InitResult, "tools/list": `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`}),
			reachable: true, transport: probe.TransportStreamable, version: "2025-03-26", generation: probe.GenerationSession},
		{name: "legacy SSE after two refused POSTs", handler: mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return crawltest.NewSDKServer(tools, 0) }, nil), path: "/mcp",
			reachable: true, transport: probe.TransportSSE, version: probe.RequestedVersion, generation: probe.GenerationSession, ttl: &zero, scope: "public"},
		{name: "refuses every revision", handler: refusing(), transport: probe.TransportStreamable,
			supported: []string{"2099-01-01"}, step: "initialize", rpcCode: -32022},
		{name: "refuses notifications/initialized", handler: refusingInitialized(), transport: probe.TransportStreamable,
			version: "2025-03-26", generation: probe.GenerationSession, step: "notifications/initialized"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := crawltest.ProbeOnce(t, probe.Options{}, crawltest.Serve(t, c.handler).URL+c.path)
			if r.Reachable != c.reachable || r.ProtocolVersion != c.version || r.Generation != c.generation || !slices.Equal(r.SupportedVersions, c.supported) {
				t.Fatalf("reachable=%v (%s %s) version %q generation %q supported %q; want %v %q %q %q",
					r.Reachable, r.ErrorKind, r.Error, r.ProtocolVersion, r.Generation, r.SupportedVersions, c.reachable, c.version, c.generation, c.supported)
			}
			if c.reachable && (r.Transport != c.transport || len(r.Tools) == 0) {
				t.Errorf("transport %q, %d tools", r.Transport, len(r.Tools))
			}
			if (r.ToolsTTLMs == nil) != (c.ttl == nil) || (c.ttl != nil && *r.ToolsTTLMs != *c.ttl) || r.ToolsCacheScope != c.scope {
				t.Errorf("ttlMs %v cacheScope %q, want %v %q", r.ToolsTTLMs, r.ToolsCacheScope, c.ttl, c.scope)
			}
			if r.FailedStep != c.step {
				t.Errorf("failed step %q, want %q", r.FailedStep, c.step)
			}
			if c.rpcCode != 0 && (r.RPCError == nil || r.RPCError.Code != c.rpcCode || !strings.Contains(string(r.RPCError.Data), `"supported":["2099-01-01"]`)) {
				t.Errorf("rpc error %+v, want code %d with its data", r.RPCError, c.rpcCode)
			}
			// The crawl's record of r keeps both: TestRecordKeepsNegotiation.
		})
	}
}

// TestStatelessOnlyAsItsClient: the probe of a Go SDK server that speaks
// only 2026-07-28 negotiates what the SDK's own client negotiates and
// lists what it lists.
func TestStatelessOnlyAsItsClient(t *testing.T) {
	tools := crawltest.GenTools(8, "s")
	url := crawltest.Serve(t, statelessOnly(tools)).URL
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "own", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var want []*mcp.Tool
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, tl)
	}
	r := crawltest.ProbeOnce(t, probe.Options{}, url)
	if !r.Reachable || r.ProtocolVersion != cs.InitializeResult().ProtocolVersion || len(r.Tools) != len(want) {
		t.Fatalf("reachable=%v (%s) protocol %s, %d tools; the SDK's client: %s, %d tools",
			r.Reachable, r.Error, r.ProtocolVersion, len(r.Tools), cs.InitializeResult().ProtocolVersion, len(want))
	}
	for i, tl := range want {
		b, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		if got, exp := crawltest.NameAndSchema(t, r.Tools[i]), crawltest.NameAndSchema(t, b); !reflect.DeepEqual(got, exp) {
			t.Errorf("tool %d:\n got %v\nwant %v", i, got, exp)
		}
	}
}

// TestDiscoverUnanswered: a server of an older revision that opens the
// answer to server/discover (its HTTP status) but never sends the JSON-RPC
// answer is still asked by initialize, within the deadline.
func TestDiscoverUnanswered(t *testing.T) {
	answer := crawltest.Scripted(map[string]string{"initialize": crawltest.InitResult, "tools/list": `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`})
	ts := crawltest.ServeHanging(t, func(stop <-chan struct{}) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"server/discover"`) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-stop:
				}
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			answer.ServeHTTP(w, r)
		})
	})
	r := crawltest.ProbeOnce(t, probe.Options{Timeout: 3 * time.Second}, ts.URL)
	if !r.Reachable || r.Generation != probe.GenerationSession || len(r.Tools) != 1 {
		t.Fatalf("reachable=%v (%s %s) generation %q, %d tools", r.Reachable, r.ErrorKind, r.Error, r.Generation, len(r.Tools))
	}
}
