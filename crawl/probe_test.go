package crawl

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"go.uber.org/goleak"
)

// TestMain runs the tests, then fails when a goroutine is left behind:
// goleak.VerifyTestMain, with the test servers' SDK sessions closed first.
func TestMain(m *testing.M) {
	code := m.Run()
	closeSDKSessions()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	_, u, err := probe.Normalise(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// loopback is the tests' address policy: their servers listen on
// 127.0.0.1, and every other address stands for one off limits.
func loopback(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }

// testProbe are bounds that make the hostile cases fail fast.
var testProbe = probe.Options{Timeout: 300 * time.Millisecond, MaxPages: 30, MaxTools: 3000, MaxBytes: 4 << 20, AllowAddr: loopback}

func TestProbe(t *testing.T) {
	few := genTools(3, "few")
	many := genTools(2500, "many")
	https := httptestTLS(t)
	cases := []struct {
		name      string
		url       func(t *testing.T) string
		tools     []testTool // served tools, for a reachable case
		transport string
		version   string
		kind      string // error kind, for an unreachable case
	}{
		{name: "streamable JSON", url: func(t *testing.T) string { return streamableServer(t, few, 0, true).URL + "/mcp" },
			tools: few, transport: probe.TransportStreamable, version: probe.RequestedVersion},
		{name: "streamable SSE-framed", url: func(t *testing.T) string { return streamableServer(t, few, 0, false).URL },
			tools: few, transport: probe.TransportStreamable, version: probe.RequestedVersion},
		{name: "legacy SSE endpoint", url: func(t *testing.T) string { return sseServer(t, few).URL + "/sse" },
			tools: few, transport: probe.TransportSSE, version: probe.RequestedVersion},
		{name: "legacy SSE by fallback after a 4xx to POST", url: func(t *testing.T) string { return sseServer(t, few).URL + "/mcp" },
			tools: few, transport: probe.TransportSSE, version: probe.RequestedVersion},
		{name: "2,500 tools in pages of 100", url: func(t *testing.T) string { return streamableServer(t, many, 100, true).URL },
			tools: many, transport: probe.TransportStreamable, version: probe.RequestedVersion},
		{name: "hangs", url: func(t *testing.T) string { return serveHanging(t, hanging).URL }, kind: probe.KindTimeout},
		{name: "answers 500", url: func(t *testing.T) string { return serve(t, status(500)).URL }, kind: probe.KindHTTPStatus},
		{name: "answers 404 to POST and GET", url: func(t *testing.T) string { return serve(t, status(404)).URL }, kind: probe.KindHTTPStatus},
		{name: "invalid JSON", url: func(t *testing.T) string { return serve(t, invalidJSON()).URL }, kind: probe.KindInvalidJSON},
		{name: "paginates forever", url: func(t *testing.T) string { return serve(t, paginating(false)).URL }, kind: probe.KindTooManyPages},
		{name: "repeats a cursor", url: func(t *testing.T) string { return serve(t, paginating(true)).URL }, kind: probe.KindCursorLoop},
		{name: "streams keep-alives without end", url: func(t *testing.T) string { return serve(t, endlessStream(false)).URL }, kind: probe.KindTimeout},
		{name: "streams data without end", url: func(t *testing.T) string { return serve(t, endlessStream(true)).URL }, kind: probe.KindTooManyBytes},
		{name: "redirects to another scheme", url: func(t *testing.T) string { return serve(t, redirecting(https)).URL }, kind: probe.KindRedirect},
		{name: "redirects off http", url: func(t *testing.T) string { return serve(t, redirecting("file:///etc/passwd")).URL }, kind: probe.KindRedirect},
		{name: "redirects off limits", url: func(t *testing.T) string {
			return serve(t, redirecting("http://127.0.0.2:9/mcp")).URL
		}, kind: probe.KindBlocked},
		{name: "resets the connection", url: func(t *testing.T) string { return serve(t, resetting()).URL }, kind: probe.KindConnect},
		{name: "initialize answered with a JSON-RPC error", url: func(t *testing.T) string {
			return serve(t, scripted(map[string]string{"initialize": "error:go away"})).URL
		}, kind: probe.KindRPCError},
		{name: "tools/list answered with a JSON-RPC error", url: func(t *testing.T) string {
			return serve(t, scripted(map[string]string{"initialize": initResult})).URL
		}, kind: probe.KindRPCError},
		{name: "tools is not a list", url: func(t *testing.T) string {
			return serve(t, scripted(map[string]string{"initialize": initResult, "tools/list": `{"tools":{"a":1}}`})).URL
		}, kind: probe.KindProtocol},
		{name: "more tools than the cap", url: func(t *testing.T) string {
			return streamableServer(t, genTools(testProbe.MaxTools+1, "cap"), 0, true).URL
		}, kind: probe.KindTooManyTools},
		{name: "a tool nested deeper than CPython's json reads", url: func(t *testing.T) string {
			// 992 levels: within the SDK's JSON limit (1000 with the
			// envelope), beyond the census decoder's (990).
			deep := strings.Repeat(`{"a":`, 992) + "1" + strings.Repeat("}", 992)
			return serve(t, scripted(map[string]string{"initialize": initResult,
				"tools/list": `{"tools":[{"name":"deep","inputSchema":` + deep + `}]}`})).URL
		}, kind: probe.KindInvalidTools},
		{name: "nothing listens", url: func(t *testing.T) string { return closedURL(t) }, kind: probe.KindConnect},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := testProbe
			if c.kind != probe.KindTimeout {
				// A loaded machine must not turn a slow answer into a
				// timeout; only the cases that must time out get the
				// short deadline.
				opt.Timeout = 20 * time.Second
			}
			p := probe.NewProber(opt)
			defer p.Close()
			r := p.Probe(context.Background(), mustURL(t, c.url(t)))
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
				if want := tool.served(t); !bytes.Equal(r.Tools[i], want) {
					t.Fatalf("tool %d:\n got %s\nwant %s", i, r.Tools[i], want)
				}
			}
		})
	}
}

// TestProbeUserAgent: every request names the tool.
func TestProbeUserAgent(t *testing.T) {
	s := newSDKServer(genTools(1, "ua"), 0)
	h := mcpHandler(s)
	agents := make(chan string, 100)
	ts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents <- r.Header.Get("User-Agent")
		h.ServeHTTP(w, r)
	}))
	p := probe.NewProber(probe.Options{Timeout: 5 * time.Second, AllowAddr: loopback, UserAgent: "atlas-reproduce/test"})
	defer p.Close()
	if r := p.Probe(context.Background(), mustURL(t, ts.URL)); !r.Reachable {
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
	ts := serve(t, scripted(map[string]string{"initialize": initResult, "tools/list": `{"tools": [` + tool + `]}`}))
	p := probe.NewProber(probe.Options{Timeout: 20 * time.Second, AllowAddr: loopback})
	defer p.Close()
	r := p.Probe(context.Background(), mustURL(t, ts.URL))
	if !r.Reachable || len(r.Tools) != 1 || string(r.Tools[0]) != tool {
		t.Fatalf("reachable=%v %s %s: tools %s, want [%s]", r.Reachable, r.ErrorKind, r.Error, r.Tools, tool)
	}
	if r.ProtocolVersion != "2025-03-26" || string(r.ServerInfo) != `{"name":"hand-written","version":"0"}` {
		t.Errorf("version %q serverInfo %s", r.ProtocolVersion, r.ServerInfo)
	}
}

func TestAddressPolicy(t *testing.T) {
	ts := streamableServer(t, genTools(1, "p"), 0, true)
	p := probe.NewProber(probe.Options{Timeout: 5 * time.Second}) // the default: public addresses only
	defer p.Close()
	if r := p.Probe(context.Background(), mustURL(t, ts.URL)); r.Reachable || r.ErrorKind != probe.KindBlocked {
		t.Errorf("loopback with the default policy: reachable=%v kind %q (%s)", r.Reachable, r.ErrorKind, r.Error)
	}
	// The forms a hostile round reached loopback with: refused at the
	// dial, before any packet leaves.
	_, port, _ := strings.Cut(strings.TrimPrefix(ts.URL, "http://127.0.0.1"), ":")
	for _, host := range []string{"[64:ff9b::7f00:1]", "[::127.0.0.1]", "[2002:7f00:1::1]", "0.0.0.1", "[::ffff:127.0.0.1]"} {
		t.Run(host, func(t *testing.T) {
			r := p.Probe(context.Background(), mustURL(t, "http://"+host+":"+port+"/mcp"))
			if r.Reachable || r.ErrorKind != probe.KindBlocked {
				t.Errorf("reachable=%v kind %q (%s), want %s", r.Reachable, r.ErrorKind, r.Error, probe.KindBlocked)
			}
		})
	}
}

// TestPublicAddr: every special-purpose block is refused, and an address
// that embeds an IPv4 one is judged by it.
func TestPublicAddr(t *testing.T) {
	cases := []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true}, {"1.1.1.1", true}, {"2606:4700::1111", true}, {"::ffff:8.8.4.4", true},
		{"127.0.0.1", false}, {"127.255.255.254", false}, {"10.1.2.3", false}, {"172.16.0.1", false}, {"172.31.255.255", false},
		{"192.168.1.1", false}, {"169.254.169.254", false}, {"100.64.0.1", false}, {"100.127.255.255", false},
		{"0.0.0.0", false}, {"0.0.0.1", false}, {"0.255.255.255", false}, {"192.0.0.9", false}, {"192.0.2.1", false},
		{"192.31.196.1", false}, {"192.52.193.1", false}, {"192.88.99.1", false}, {"192.175.48.1", false},
		{"198.18.0.1", false}, {"198.19.255.255", false}, {"198.51.100.7", false}, {"203.0.113.9", false},
		{"224.0.0.1", false}, {"239.255.255.250", false}, {"240.0.0.1", false}, {"255.255.255.255", false},
		{"172.32.0.1", true}, {"100.128.0.1", true}, {"198.20.0.1", true}, {"192.0.1.1", true},
		{"::", false}, {"::1", false}, {"fd00::1", false}, {"fc00::1", false}, {"fe80::1", false}, {"fe80::1%eth0", false},
		{"fec0::1", false}, {"ff02::1", false}, {"100::1", false}, {"2001:db8::1", false}, {"2001:2::1", false},
		{"2001:10::1", false}, {"2001:20::1", false}, {"2620:4f:8000::1", false}, {"3fff::1", false}, {"5f00::1", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false},
		// IPv4-compatible.
		{"::127.0.0.1", false}, {"::10.0.0.1", false}, {"::0.0.0.1", false}, {"::8.8.8.8", true},
		// NAT64, well-known and local-use prefixes.
		{"64:ff9b::7f00:1", false}, {"64:ff9b::a9fe:a9fe", false}, {"64:ff9b::808:808", true},
		{"64:ff9b:1:7f00:0:100::", false}, {"64:ff9b:1:808:8:800::", true},
		// 6to4.
		{"2002:7f00:1::1", false}, {"2002:a00:1::1", false}, {"2002:808:808::1", true},
		// Teredo: the server, then the client's address inverted.
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", false}, // client 127.0.0.1
		{"2001:0:7f00:1:0:0:f7f7:f7f7", false},          // server 127.0.0.1
		{"2001:0:808:808:0:0:f7f7:f7f7", true},          // both 8.8.8.8
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, // client 192.0.2.45, documentation
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			if got := probe.PublicAddr(netip.MustParseAddr(c.addr)); got != c.public {
				t.Errorf("PublicAddr(%s) = %v, want %v", c.addr, got, c.public)
			}
		})
	}
}
