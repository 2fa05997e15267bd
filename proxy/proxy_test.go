//lint:file-ignore SA1019 roots and sampling are deprecated in the newest protocol revision, but a proxy must still relay them for the others.

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// testTimeout bounds every exchange: a relay that hangs fails the test
// instead of stalling it.
const testTimeout = 60 * time.Second

func connectClient(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectVersion(t, tr, opts, "")
}

// connectVersion connects asking for the protocol version v ("" for the
// SDK's latest).
func connectVersion(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions, v string) *mcp.ClientSession {
	t.Helper()
	// The legacy SSE client holds its event stream on the context Connect
	// is given: it must last as long as the session.
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
	})
	return cs
}

// stripLabels removes the proxy's member from a labelled tool, whichever of
// the three ways it was added, and reports whether it found it.
func stripLabels(tool []byte, meta []byte) ([]byte, bool) {
	member := append([]byte(`"`+MetaKey+`":`), meta...)
	for _, cut := range [][]byte{
		append(append([]byte(`,"_meta":{`), member...), '}'), // no _meta before
		append([]byte(","), member...),                       // appended to a _meta
	} {
		if i := bytes.LastIndex(tool, cut); i >= 0 {
			return append(append([]byte(nil), tool[:i]...), tool[i+len(cut):]...), true
		}
	}
	if i := bytes.LastIndex(tool, member); i >= 0 { // the only member of an empty _meta
		return append(append([]byte(nil), tool[:i]...), tool[i+len(member):]...), true
	}
	return nil, false
}

func compact(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return buf.Bytes()
}

// checkListed checks a proxied tools/list result against the one the
// upstream sent: the same tools in the same order, each byte-equal once
// the labels are taken out, and the labels those wanted.
func checkListed(t *testing.T, got, upstream []json.RawMessage, want map[string][]string) {
	t.Helper()
	if len(got) != len(upstream) {
		t.Fatalf("%d tools through the proxy, %d from the upstream", len(got), len(upstream))
	}
	for i := range got {
		l := labelsOf(t, got[i])
		if l == nil {
			t.Errorf("tool %d has no labels: %s", i, got[i])
			continue
		}
		if l.Rules != Rules {
			t.Errorf("tool %d rules %q", i, l.Rules)
		}
		rest, ok := stripLabels(got[i], l.raw)
		if !ok || !bytes.Equal(rest, compact(t, upstream[i])) {
			t.Errorf("tool %d changed beyond its labels:\n got %s\nwant %s", i, rest, compact(t, upstream[i]))
		}
		var name struct{ Name string }
		json.Unmarshal(got[i], &name)
		if w, ok := want[name.Name]; ok && !slices.Equal(l.Classes, w) {
			t.Errorf("tool %s classes %q, want %q", name.Name, l.Classes, w)
		}
	}
}

// legacyVersion is the latest session-based protocol revision.
const legacyVersion = "2025-11-25"

var sdkWant = map[string][]string{
	"read_file": {"gg:filesystem-path"}, "run": {"gg:command-string"}, "echo": {}, "ask": {}, "progress": {},
}

// TestRelay runs the same session through every upstream transport and
// both downstream ones: tools/list labelled and otherwise byte-equal to
// what the upstream sent to a client connected directly, and a tools/call
// answered exactly as the upstream answers it.
func TestRelay(t *testing.T) {
	srv := upstreamServer(nil, nil)
	streamable := sdkUpstreamHTTP(t, srv)
	sse := sdkUpstreamSSE(t, srv)
	upstreams := []struct {
		name   string
		up     Upstream
		direct func() mcp.Transport
	}{
		{"streamable", Upstream{URL: streamable.URL}, func() mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: streamable.URL}
		}},
		{"sse", Upstream{URL: sse.URL + "/sse"}, func() mcp.Transport { return &mcp.SSEClientTransport{Endpoint: sse.URL + "/sse"} }},
		{"stdio", stdioUpstream(t), func() mcp.Transport {
			u := stdioUpstream(t)
			cmd := exec.Command(u.Command[0], u.Command[1:]...)
			cmd.Env = u.Env
			return &mcp.CommandTransport{Command: cmd}
		}},
	}
	for _, u := range upstreams {
		dtr, direct := record(u.direct())
		// One version on both paths: the HTTP downstream is stateful, so
		// it speaks the session-based revisions only.
		dcs := connectVersion(t, dtr, nil, legacyVersion)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := dcs.ListTools(ctx, nil); err != nil {
			t.Fatalf("%s direct: %v", u.name, err)
		}
		if _, err := dcs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Fatalf("%s direct: %v", u.name, err)
		}
		for _, down := range []string{"http", "stdio"} {
			t.Run(u.name+"/"+down, func(t *testing.T) {
				p := newProxy(t, u.up, Policy{})
				var tr mcp.Transport
				if down == "http" {
					tr = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
				} else {
					tr = stdioClient(t, p)
				}
				rtr, rec := record(tr)
				cs := connectVersion(t, rtr, nil, legacyVersion)
				if _, err := cs.ListTools(ctx, nil); err != nil {
					t.Fatal(err)
				}
				checkListed(t, toolsOf(t, rec.last("tools/list")), toolsOf(t, direct.last("tools/list")), sdkWant)
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
					t.Fatal(err)
				}
				if got, want := rec.last("tools/call"), direct.last("tools/call"); !bytes.Equal(got, want) {
					t.Errorf("tools/call result\n got %s\nwant %s", got, want)
				}
			})
		}
	}
}

// TestPythonUpstream relays the standard-library Python server: an
// implementation other than the SDK, whose tools carry what a re-encoding
// would lose (key order, an unknown field, a duplicate key, an escape, a
// number literal) and whose list comes in two pages; its error answer
// passes as it came.
func TestPythonUpstream(t *testing.T) {
	script := filepath.Join(testenv.Root(), "crawl", "testdata", "mcp_server.py")
	url, raws := testenv.PythonMCPServer(t, script), testenv.PythonMCPServerTools(t, script)
	for _, down := range []string{"http", "stdio"} {
		t.Run(down, func(t *testing.T) {
			p := newProxy(t, Upstream{URL: url}, Policy{})
			var tr mcp.Transport
			if down == "http" {
				tr = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
			} else {
				tr = stdioClient(t, p)
			}
			rtr, rec := record(tr)
			cs := connectClient(t, rtr, nil)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			var got []json.RawMessage
			cursor := ""
			for {
				res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, toolsOf(t, rec.last("tools/list"))...)
				if cursor = res.NextCursor; cursor == "" {
					break
				}
			}
			var upstream []json.RawMessage
			for _, r := range raws {
				upstream = append(upstream, json.RawMessage(r))
			}
			checkListed(t, got, upstream, map[string][]string{
				"read_file": {"gg:filesystem-path"}, "charge": {"gg:credential-value", "gg:money-amount"}, "run": {"gg:command-string"},
			})
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{}})
			if e := rec.lastError("tools/call"); err == nil || e == nil || e.Code != -32601 || e.Message != "method not found" {
				t.Errorf("tools/call: err %v, error object %+v; want the server's -32601", err, e)
			}
		})
	}
}

// TestServerToClient relays the server's own requests (roots/list and
// sampling, made inside a call) to the client and the client's answers
// back.
func TestServerToClient(t *testing.T) {
	srv := upstreamServer(nil, nil)
	up := sdkUpstreamHTTP(t, srv)
	for _, down := range []string{"http", "stdio"} {
		t.Run(down, func(t *testing.T) {
			p := newProxy(t, Upstream{URL: up.URL}, Policy{})
			var tr mcp.Transport
			if down == "http" {
				tr = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
			} else {
				tr = stdioClient(t, p)
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					in := req.Params.Messages[0].Content.(*mcp.TextContent).Text
					return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled " + in}}, nil
				},
			})
			client.AddRoots(&mcp.Root{URI: "file:///root-a", Name: "a"})
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			cs, err := client.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("ask failed: %v", res.Content[0].(*mcp.TextContent).Text)
			}
			if got, want := res.Content[0].(*mcp.TextContent).Text, "file:///root-a|sampled hello"; got != want {
				t.Errorf("ask = %q, want %q", got, want)
			}
		})
	}
}

// TestListChanged relays a tools/list_changed the upstream sends outside any
// call, and labels the next list afresh.
func TestListChanged(t *testing.T) {
	for _, kind := range []string{"streamable", "sse"} {
		t.Run(kind, func(t *testing.T) {
			srv := upstreamServer(nil, nil)
			up := Upstream{URL: sdkUpstreamHTTP(t, srv).URL}
			if kind == "sse" {
				up = Upstream{URL: sdkUpstreamSSE(t, srv).URL + "/sse"}
			}
			p := newProxy(t, up, Policy{})
			changed := make(chan struct{}, 1)
			// Not recorded: the SDK client opens its standalone stream
			// (where list_changed arrives) only on its own connection.
			cs := connectClient(t, &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case changed <- struct{}{}:
				default:
				}
			}})
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			srv.AddTool(&mcp.Tool{Name: "fetch", Description: "fetch a page",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult(""), nil })
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("no tools/list_changed reached the client")
			}
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, tool := range res.Tools {
				raw, _ := json.Marshal(tool)
				if l := labelsOf(t, raw); l != nil && tool.Name == "fetch" {
					found = slices.Equal(l.Classes, []string{"gg:url-endpoint"})
				}
			}
			if !found {
				t.Errorf("the new tool is not listed with gg:url-endpoint")
			}
		})
	}
}

// TestPolicy hides and denies by class, and exempts by name.
func TestPolicy(t *testing.T) {
	up := Upstream{URL: sdkUpstreamHTTP(t, upstreamServer(nil, nil)).URL}
	cases := []struct {
		name          string
		pol           Policy
		list          bool
		listed        []string // names listed, in order
		refused       map[string]string
		called        []string
		deniedClasses []string
	}{
		{name: "off", list: true, listed: []string{"echo", "read_file", "run", "ask", "wait", "progress", "die"},
			called: []string{"echo", "read_file", "run"}},
		{name: "hide and deny", pol: Policy{Hide: []string{"filesystem-path"}, Deny: []string{"gg:command-string"}}, list: true,
			listed:  []string{"echo", "run", "ask", "wait", "progress", "die"},
			refused: map[string]string{"read_file": "gg:filesystem-path", "run": "gg:command-string"},
			called:  []string{"echo"}, deniedClasses: []string{"gg:command-string", "gg:filesystem-path"}},
		{name: "allow", pol: Policy{Hide: []string{"gg:filesystem-path"}, Deny: []string{"gg:command-string"}, AllowTools: []string{"run", "read_file"}},
			list: true, listed: []string{"echo", "read_file", "run", "ask", "wait", "progress", "die"}, called: []string{"echo", "read_file", "run"}},
		{name: "unlisted", pol: Policy{Deny: []string{"gg:command-string"}},
			refused: map[string]string{"echo": "list the tools first"}, deniedClasses: []string{"unlisted"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProxy(t, up, c.pol)
			rtr, rec := record(&mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"})
			cs := connectClient(t, rtr, nil)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if c.list {
				if _, err := cs.ListTools(ctx, nil); err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, tool := range toolsOf(t, rec.last("tools/list")) {
					var n struct{ Name string }
					json.Unmarshal(tool, &n)
					names = append(names, n.Name)
				}
				slices.Sort(names)
				want := slices.Sorted(slices.Values(c.listed))
				if !slices.Equal(names, want) {
					t.Errorf("listed %q, want %q", names, want)
				}
			}
			for name, class := range c.refused {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
				e := rec.lastError("tools/call")
				if err == nil || e == nil || e.Code != CodeDenied || !strings.Contains(e.Message, class) {
					t.Errorf("call %s: err %v, error %+v; want %d naming %s", name, err, e, CodeDenied, class)
				}
			}
			for _, name := range c.called {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
				if err != nil || res.IsError {
					t.Errorf("call %s: %v %+v", name, err, res)
				}
			}
			var denied []string
			for _, class := range ClassIDs() {
				if testCounter(t, p, "atlas_proxy_calls_denied_total", class) > 0 {
					denied = append(denied, class)
				}
			}
			if testCounter(t, p, "atlas_proxy_calls_denied_total", "unlisted") > 0 {
				denied = append(denied, "unlisted")
			}
			if !slices.Equal(denied, c.deniedClasses) {
				t.Errorf("denied counters for %q, want %q", denied, c.deniedClasses)
			}
		})
	}
}

// testCounter reads a counter of p's registry with the given label value.
func testCounter(t *testing.T, p *Proxy, name, label string) float64 {
	t.Helper()
	mfs, err := p.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
			if label == "" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestUpstreamFails: an upstream that dies in the middle of a call, or
// cannot be reached at all, is an error to the client, never a hang.
func TestUpstreamFails(t *testing.T) {
	t.Run("stdio process exits mid-call", func(t *testing.T) {
		p := newProxy(t, stdioUpstream(t), Policy{})
		cs := connectClient(t, &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "die", Arguments: map[string]any{}})
		if err == nil || ctx.Err() != nil {
			t.Fatalf("call: err %v, ctx %v; want an upstream error before the deadline", err, ctx.Err())
		}
		if testCounter(t, p, "atlas_proxy_upstream_failures_total", "") != 1 {
			t.Error("the failure was not counted")
		}
	})
	t.Run("http server drops the call", func(t *testing.T) {
		started, release := make(chan struct{}, 1), make(chan struct{})
		defer close(release)
		up := sdkUpstreamHTTP(t, upstreamServer(started, release))
		p := newProxy(t, Upstream{URL: up.URL}, Policy{})
		cs := connectClient(t, stdioClient(t, p), nil)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
			errc <- err
		}()
		<-started
		up.CloseClientConnections()
		if err := <-errc; err == nil || ctx.Err() != nil {
			t.Fatalf("call: err %v, ctx %v; want an upstream error before the deadline", err, ctx.Err())
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		p := newProxy(t, Upstream{URL: "http://" + addr + "/mcp"}, Policy{})
		for _, down := range []string{"http", "stdio"} {
			var tr mcp.Transport
			if down == "http" {
				tr = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp", MaxRetries: -1}
			} else {
				tr = stdioClient(t, p)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			_, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, tr, nil)
			if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "upstream") {
				t.Errorf("%s: connect err %v, ctx %v; want an upstream error before the deadline", down, err, ctx.Err())
			}
			cancel()
		}
	})
}

// TestClientGoesAway: a client that ends its session ends the upstream's.
func TestClientGoesAway(t *testing.T) {
	srv := upstreamServer(nil, nil)
	ended := make(chan struct{}, 4)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	up := sdkUpstreamHTTP(t, srv)
	up.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.Method == http.MethodDelete {
			ended <- struct{}{}
		}
	})
	p := newProxy(t, Upstream{URL: up.URL}, Policy{})
	for _, down := range []string{"http", "stdio"} {
		t.Run(down, func(t *testing.T) {
			var tr mcp.Transport
			if down == "http" {
				tr = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
			} else {
				tr = stdioClient(t, p)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Fatal(err)
			}
			cs.Close()
			select {
			case <-ended:
			case <-ctx.Done():
				t.Fatal("the upstream session was not ended")
			}
		})
	}
}

// TestHealthAndMetrics: /healthz answers, /metrics counts labelled tools
// and requests by method.
func TestHealthAndMetrics(t *testing.T) {
	up := Upstream{URL: sdkUpstreamHTTP(t, upstreamServer(nil, nil)).URL}
	p := newProxy(t, up, Policy{})
	base := serveHTTP(t, p)
	cs := connectClient(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for range 2 {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if got := get("/healthz"); got != "ok\n" {
		t.Errorf("/healthz = %q", got)
	}
	m := get("/metrics")
	for _, want := range []string{
		"atlas_proxy_tools_labelled_total 14", // seven tools, listed twice
		"atlas_proxy_label_cache_hits_total 7",
		`atlas_proxy_requests_total{method="tools/list"} 2`,
		`atlas_proxy_requests_total{method="initialize"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestConfig rejects what cannot work before anything starts.
func TestConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no upstream", Config{}, "no upstream"},
		{"both", Config{Upstream: Upstream{URL: "http://x", Command: []string{"x"}}}, "not both"},
		{"scheme", Config{Upstream: Upstream{URL: "ftp://x"}}, "http or https"},
		{"class", Config{Upstream: Upstream{URL: "http://x"}, Policy: Policy{Deny: []string{"gg:nope"}}}, "unknown class"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
}

var _ = errors.New
var _ jsonrpc.ID

// TestNodeUpstream relays a stdio server of another implementation (plain
// Node.js, no SDK): tools byte-equal but for the labels (its own _meta
// kept), a call's _meta and number literals kept, its error object as it
// came, and its own roots/list request answered by the client.
func TestNodeUpstream(t *testing.T) {
	node := testenv.Node(t) // skips without node, fails with CI=true
	out, err := exec.Command(node, "testdata/node_server.js", "--dump").Output()
	if err != nil {
		t.Fatal(err)
	}
	var raws []string
	if err := json.Unmarshal(out, &raws); err != nil {
		t.Fatal(err)
	}
	var upstream []json.RawMessage
	for _, r := range raws {
		upstream = append(upstream, json.RawMessage(r))
	}
	for _, down := range []string{"http", "stdio"} {
		t.Run(down, func(t *testing.T) {
			// The recording client opens no standalone stream over HTTP
			// (the SDK opens it only on its own connection), so the
			// server's roots/list has nowhere to go there: the bound
			// makes it an error answer to the server, not a hang.
			p, err := New(Config{Upstream: Upstream{Command: []string{node, "testdata/node_server.js"}}, OutboxWait: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			wantRoots := "file:///from-client"
			if down == "http" {
				wantRoots = "error" // what the Node server makes of an error answer
			}
			var tr mcp.Transport
			if down == "http" {
				tr = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
			} else {
				tr = stdioClient(t, p)
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			client.AddRoots(&mcp.Root{URI: "file:///from-client"})
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			// Recorded for the raw results: the roots/list request arrives
			// inside the call, on stdio or on the call's own stream.
			rtr, rec := record(tr)
			cs, err := client.Connect(ctx, rtr, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			checkListed(t, toolsOf(t, rec.last("tools/list")), upstream, map[string][]string{
				"write_file": {"gg:filesystem-path"}, "fetch": {"gg:url-endpoint"}, "ask": {},
			})
			if !strings.Contains(string(rec.last("tools/list")), `"vendor/x":{"n":1.50},"`+MetaKey+`":`) {
				t.Errorf("the server's own _meta was not kept ahead of the labels: %s", rec.last("tools/list"))
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if got, want := string(rec.last("tools/call")), `{"content":[{"type":"text","text":"done"}],"_meta":{"node/extra":[1,2.50]}}`; got != want {
				t.Errorf("tools/call result %s, want %s", got, want)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != wantRoots {
				t.Errorf("ask: %v %+v", err, res)
			}
			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "x"})
			e := rec.lastError("prompts/get")
			if err == nil || e == nil || e.Code != -32601 || string(e.Data) != `{"from":"node"}` {
				t.Errorf("prompts/get: %v %+v; want the server's error object", err, e)
			}
		})
	}
}

// TestLongCall: a call that outlasts the HTTP read timeout (which bounds
// how long a client may take to send its request) still gets its answer:
// net/http lifts the deadline once the handler runs, and the proxy must
// set no bound of its own on an answer stream. Time is the test's: the
// connections' read deadlines are kept aside (never reached on the wall
// clock), and while the call runs every deadline still set is made to
// pass at once.
func TestLongCall(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	up := sdkUpstreamHTTP(t, upstreamServer(started, release))
	p, err := New(Config{Upstream: Upstream{URL: up.URL}, ReadTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &deadlineListener{Listener: tcp}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	cs := connectClient(t, &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp"}, nil)
	cctx, ccancel := context.WithTimeout(context.Background(), testTimeout)
	defer ccancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		errc <- err
	}()
	<-started
	// Past every read deadline: what is tested is that none applies to
	// the call's answer any more.
	if n := ln.expire(); n == 0 {
		t.Log("no deadline was set: net/http lifted them all")
	}
	close(release)
	if err := <-errc; err != nil {
		t.Errorf("a call longer than the read timeout: %v", err)
	}
}

// deadlineListener keeps its connections' read deadlines aside instead of
// setting them, and makes every one still set pass on expire.
type deadlineListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*deadlineConn
}

func (l *deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	dc := &deadlineConn{Conn: c}
	l.mu.Lock()
	l.conns = append(l.conns, dc)
	l.mu.Unlock()
	return dc, nil
}

// expire makes every read deadline still set pass now, and returns how
// many there were.
func (l *deadlineListener) expire() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.conns {
		if c.expire() {
			n++
		}
	}
	return n
}

type deadlineConn struct {
	net.Conn
	mu  sync.Mutex
	set bool // a read deadline is in force
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set = !t.IsZero()
	return c.Conn.SetReadDeadline(time.Time{})
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.Conn.SetWriteDeadline(t)
	return c.SetReadDeadline(t)
}

func (c *deadlineConn) expire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.set {
		return false
	}
	c.Conn.SetReadDeadline(time.Unix(1, 0))
	return true
}

// TestProgressAndCancel relays a server's progress notifications to the
// client, and a client's cancellation to the server.
func TestProgressAndCancel(t *testing.T) {
	for _, down := range []string{"http", "stdio"} {
		t.Run(down, func(t *testing.T) {
			started := make(chan struct{}, 1)
			up := sdkUpstreamHTTP(t, upstreamServer(started, make(chan struct{})))
			p := newProxy(t, Upstream{URL: up.URL}, Policy{})
			var tr mcp.Transport
			if down == "http" {
				tr = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
			} else {
				tr = stdioClient(t, p)
			}
			progress := make(chan *mcp.ProgressNotificationParams, 1)
			cs := connectClient(t, tr, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				progress <- req.Params
			}})
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()

			params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
			params.SetProgressToken("tok-1")
			if _, err := cs.CallTool(ctx, params); err != nil {
				t.Fatal(err)
			}
			select {
			case pr := <-progress:
				if pr.ProgressToken != "tok-1" || pr.Message != "half" || pr.Progress != 1 {
					t.Errorf("progress %+v", pr)
				}
			case <-ctx.Done():
				t.Fatal("no progress notification reached the client")
			}

			cctx, ccancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
				errc <- err
			}()
			<-started
			ccancel()
			if err := <-errc; err == nil {
				t.Error("the cancelled call succeeded")
			}
			select {
			case <-started: // the server's handler saw the cancellation
			case <-ctx.Done():
				t.Fatal("the cancellation did not reach the server")
			}
		})
	}
}
