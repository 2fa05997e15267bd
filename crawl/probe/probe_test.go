package probe_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

func TestProbe(t *testing.T) {
	few := crawltest.GenTools(3, "few")
	many := crawltest.GenTools(2500, "many")
	https := crawltest.HTTPTestTLS(t)
	cases := []struct {
		name      string
		url       func(t *testing.T) string
		tools     []crawltest.Tool // served tools, for a reachable case
		transport string
		version   string
		kind      string // error kind, for an unreachable case
	}{
		{name: "streamable JSON", url: func(t *testing.T) string { return crawltest.StreamableServer(t, few, 0, true).URL + "/mcp" },
			tools: few, transport: probe.TransportStreamable, version: probe.RequestedVersion},
		{name: "streamable SSE-framed", url: func(t *testing.T) string { return crawltest.StreamableServer(t, few, 0, false).URL },
			tools: few, transport: probe.TransportStreamable, version: probe.RequestedVersion},
		{name: "legacy SSE endpoint", url: func(t *testing.T) string { return crawltest.SSEServer(t, few).URL + "/sse" },
			tools: few, transport: probe.TransportSSE, version: probe.RequestedVersion},
		{name: "legacy SSE by fallback after a 4xx to POST", url: func(t *testing.T) string { return crawltest.SSEServer(t, few).URL + "/mcp" },
			tools: few, transport: probe.TransportSSE, version: probe.RequestedVersion},
		{name: "2,500 tools in pages of 100", url: func(t *testing.T) string { return crawltest.StreamableServer(t, many, 100, true).URL },
			tools: many, transport: probe.TransportStreamable, version: probe.RequestedVersion},
		{name: "hangs", url: func(t *testing.T) string { return crawltest.ServeHanging(t, crawltest.Hanging).URL }, kind: probe.KindTimeout},
		{name: "answers 500", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.Status(500)).URL }, kind: probe.KindHTTPStatus},
		{name: "answers 404 to POST and GET", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.Status(404)).URL }, kind: probe.KindHTTPStatus},
		{name: "invalid JSON", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.InvalidJSON()).URL }, kind: probe.KindInvalidJSON},
		{name: "paginates forever", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.Paginating(false)).URL }, kind: probe.KindTooManyPages},
		{name: "repeats a cursor", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.Paginating(true)).URL }, kind: probe.KindCursorLoop},
		{name: "streams keep-alives without end", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.EndlessStream(false)).URL }, kind: probe.KindTimeout},
		{name: "streams data without end", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.EndlessStream(true)).URL }, kind: probe.KindTooManyBytes},
		{name: "redirects to another scheme", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.Redirecting(https)).URL }, kind: probe.KindRedirect},
		{name: "redirects off http", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.Redirecting("file:///etc/passwd")).URL }, kind: probe.KindRedirect},
		{name: "redirects off limits", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.Redirecting("http://127.0.0.2:9/mcp")).URL
		}, kind: probe.KindBlocked},
		{name: "resets the connection", url: func(t *testing.T) string { return crawltest.Serve(t, crawltest.Resetting()).URL }, kind: probe.KindConnect},
		{name: "initialize answered with a JSON-RPC error", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.Scripted(map[string]string{"initialize": "error:go away"})).URL
		}, kind: probe.KindRPCError},
		{name: "tools/list answered with a JSON-RPC error", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.Scripted(map[string]string{"initialize": crawltest.InitResult})).URL
		}, kind: probe.KindRPCError},
		{name: "tools is not a list", url: func(t *testing.T) string {
			return crawltest.Serve(t, crawltest.Scripted(map[string]string{"initialize": crawltest.InitResult, "tools/list": `{"tools":{"a":1}}`})).URL
		}, kind: probe.KindProtocol},
		{name: "more tools than the cap", url: func(t *testing.T) string {
			return crawltest.StreamableServer(t, crawltest.GenTools(crawltest.FastProbe.MaxTools+1, "cap"), 0, true).URL
		}, kind: probe.KindTooManyTools},
		{name: "a tool nested deeper than CPython's json reads", url: func(t *testing.T) string {
			// 992 levels: within the SDK's JSON limit (1000 with the
			// envelope), beyond the census decoder's (990).
			deep := strings.Repeat(`{"a":`, 992) + "1" + strings.Repeat("}", 992)
			return crawltest.Serve(t, crawltest.Scripted(map[string]string{"initialize": crawltest.InitResult,
				"tools/list": `{"tools":[{"name":"deep","inputSchema":` + deep + `}]}`})).URL
		}, kind: probe.KindInvalidTools},
		{name: "nothing listens", url: func(t *testing.T) string { return crawltest.ClosedURL(t) }, kind: probe.KindConnect},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := crawltest.FastProbe
			if c.kind != probe.KindTimeout {
				// A loaded machine must not turn a slow answer into a
				// timeout; only the cases that must time out get the
				// short deadline.
				opt.Timeout = 20 * time.Second
			}
			p := probe.NewProber(opt)
			defer p.Close()
			r := p.Probe(context.Background(), crawltest.MustURL(t, c.url(t)))
			if c.kind != "" {
				if r.Reachable || r.ErrorKind != c.kind || r.Error == "" || r.Tools != nil {
					t.Fatalf("got reachable=%v kind=%q error=%q (%d tools), want unreachable of kind %q",
						r.Reachable, r.ErrorKind, r.Error, len(r.Tools), c.kind)
				}
				return
			}
			if !r.Reachable {
				t.Fatalf("unreachable: %s: %s", r.ErrorKind, r.Error)
			}
			if r.Transport != c.transport || r.ProtocolVersion != c.version {
				t.Errorf("transport %q version %q, want %q %q", r.Transport, r.ProtocolVersion, c.transport, c.version)
			}
			if want := `{"name":"test-server","version":"1.2.3"}`; string(r.ServerInfo) != want {
				t.Errorf("serverInfo %s, want %s", r.ServerInfo, want)
			}
			if len(r.Tools) != len(c.tools) {
				t.Fatalf("%d tools, want %d", len(r.Tools), len(c.tools))
			}
			for i, tool := range c.tools {
				if want := tool.Served(t); !bytes.Equal(r.Tools[i], want) {
					t.Fatalf("tool %d:\n got %s\nwant %s", i, r.Tools[i], want)
				}
			}
		})
	}
}

// TestProbeUserAgent: every request names the tool.
func TestProbeUserAgent(t *testing.T) {
	s := crawltest.NewSDKServer(crawltest.GenTools(1, "ua"), 0)
	h := crawltest.MCPHandler(s)
	agents := make(chan string, 100)
	ts := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents <- r.Header.Get("User-Agent")
		h.ServeHTTP(w, r)
	}))
	p := probe.NewProber(probe.Options{Timeout: 5 * time.Second, AllowAddr: crawltest.Loopback, UserAgent: "atlas-reproduce/test"})
	defer p.Close()
	if r := p.Probe(context.Background(), crawltest.MustURL(t, ts.URL)); !r.Reachable {
		t.Fatalf("unreachable: %s", r.Error)
	}
	close(agents)
	n := 0
	for a := range agents {
		n++
		if a != "atlas-reproduce/test" {
			t.Errorf("User-Agent %q", a)
		}
	}
	if n < 3 { // initialize, initialized, tools/list
		t.Errorf("%d requests seen", n)
	}
}

// TestProbeKeepsWhatTheSDKWouldDrop: a tool the SDK's typed Tool cannot
// hold (a numeric name, an unknown field, a duplicate key, a long number)
// is kept verbatim, and the server stays reachable.
func TestProbeKeepsWhatTheSDKWouldDrop(t *testing.T) {
	tool := `{"name":5,"x-extra":[1.0e2,12345678901234567890123],"inputSchema":{"type":"object","properties":{"p":{"description":"a"},"p":{"description":"file path"}}}}`
	ts := crawltest.Serve(t, crawltest.Scripted(map[string]string{"initialize": crawltest.InitResult, "tools/list": `{"tools": [` + tool + `]}`}))
	p := probe.NewProber(probe.Options{Timeout: 20 * time.Second, AllowAddr: crawltest.Loopback})
	defer p.Close()
	r := p.Probe(context.Background(), crawltest.MustURL(t, ts.URL))
	if !r.Reachable || len(r.Tools) != 1 || string(r.Tools[0]) != tool {
		t.Fatalf("reachable=%v %s %s: tools %s, want [%s]", r.Reachable, r.ErrorKind, r.Error, r.Tools, tool)
	}
	if r.ProtocolVersion != "2025-03-26" || string(r.ServerInfo) != `{"name":"hand-written","version":"0"}` {
		t.Errorf("version %q serverInfo %s", r.ProtocolVersion, r.ServerInfo)
	}
}

func TestAddressPolicy(t *testing.T) {
	ts := crawltest.StreamableServer(t, crawltest.GenTools(1, "p"), 0, true)
	p := probe.NewProber(probe.Options{Timeout: 5 * time.Second}) // the default: public addresses only
	defer p.Close()
	if r := p.Probe(context.Background(), crawltest.MustURL(t, ts.URL)); r.Reachable || r.ErrorKind != probe.KindBlocked {
		t.Errorf("loopback with the default policy: reachable=%v kind %q (%s)", r.Reachable, r.ErrorKind, r.Error)
	}
	// The forms a hostile round reached loopback with: refused at the
	// dial, before any packet leaves.
	_, port, _ := strings.Cut(strings.TrimPrefix(ts.URL, "http://127.0.0.1"), ":")
	for _, host := range []string{"[64:ff9b::7f00:1]", "[::127.0.0.1]", "[2002:7f00:1::1]", "0.0.0.1", "[::ffff:127.0.0.1]"} {
		t.Run(host, func(t *testing.T) {
			r := p.Probe(context.Background(), crawltest.MustURL(t, "http://"+host+":"+port+"/mcp"))
			if r.Reachable || r.ErrorKind != probe.KindBlocked {
				t.Errorf("reachable=%v kind %q (%s), want %s", r.Reachable, r.ErrorKind, r.Error, probe.KindBlocked)
			}
		})
	}
}
