package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineClient speaks raw JSON-RPC lines to p.ServeStdio: what an SDK client
// would never send.
type lineClient struct {
	t     *testing.T
	w     io.WriteCloser
	lines chan []byte
}

func rawStdio(t *testing.T, p *Proxy) *lineClient {
	t.Helper()
	cr, pw := io.Pipe()
	pr, cw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.ServeStdio(context.Background(), pr, pw)
		pw.Close()
	}()
	c := &lineClient{t: t, w: cw, lines: make(chan []byte, 64)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(cr)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		cw.Close()
		<-done
		cr.Close()
	})
	return c
}

func (c *lineClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatalf("send %s: %v", line, err)
	}
}

// rpcMsg is a message the client received.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// recv returns the next answer (notifications and server requests are
// skipped).
func (c *lineClient) recv() rpcMsg {
	c.t.Helper()
	timer := time.NewTimer(testTimeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatal("the proxy closed the session")
			}
			var m rpcMsg
			if err := json.Unmarshal(line, &m); err != nil {
				c.t.Fatalf("answer %s: %v", line, err)
			}
			if m.Method == "" {
				return m
			}
		case <-timer.C:
			c.t.Fatal("no answer")
		}
	}
}

// handshake initializes the session and lists the tools.
func (c *lineClient) handshake() rpcMsg {
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := c.recv(); m.Error != nil {
		c.t.Fatalf("initialize: %+v", m.Error)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
	return c.recv()
}

// scriptUpstream is a Streamable HTTP upstream written in the test: it
// answers initialize and tools/list (with tools), and records every
// tools/call it is sent, whatever its id.
type scriptUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string // params of each tools/call
}

func newScriptUpstream(t testing.TB, tools string, handle func(w http.ResponseWriter, method string, id, params json.RawMessage) bool) *scriptUpstream {
	su := &scriptUpstream{}
	su.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		if msg.Method == "tools/call" {
			su.mu.Lock()
			su.calls = append(su.calls, string(msg.Params))
			su.mu.Unlock()
		}
		if handle != nil && handle(w, msg.Method, msg.ID, msg.Params) {
			return
		}
		var result string
		switch {
		case msg.ID == nil:
			w.WriteHeader(http.StatusAccepted)
			return
		case msg.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "script-session")
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"script","version":"1"}}`
		case msg.Method == "tools/list":
			result = `{"tools":` + tools + `}`
		default:
			result = `{"content":[{"type":"text","text":"ran"}]}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}))
	t.Cleanup(su.Close)
	return su
}

func (su *scriptUpstream) called() []string {
	su.mu.Lock()
	defer su.mu.Unlock()
	return slices.Clone(su.calls)
}

const (
	toolEcho = `{"name":"echo","description":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`
	toolRun  = `{"name":"run_cmd","description":"run","inputSchema":{"type":"object","properties":{"command":{"type":"string","description":"shell command"}}}}`
)

// TestPolicyFailsClosed: with --hide or --deny on, a call the proxy cannot
// read unambiguously never reaches the upstream (mcp-go decodes params
// with Go structs, matching keys in any case), nor does a tools/call sent
// as a notification; a reused id cannot take the list past the labeller.
func TestPolicyFailsClosed(t *testing.T) {
	up := newScriptUpstream(t, `[`+toolEcho+`,`+toolRun+`]`, nil)
	for _, pol := range []Policy{{Hide: []string{"command-string"}}, {Deny: []string{"command-string"}}} {
		t.Run(fmt.Sprint(pol.Hide, pol.Deny), func(t *testing.T) {
			p := newProxy(t, Upstream{URL: up.URL}, pol)
			c := rawStdio(t, p)
			c.handshake()
			for i, params := range []string{
				`{"Name":"run_cmd"}`,
				`{"name":"echo","NAME":"run_cmd"}`,
				`{"nAmE":"run_cmd"}`,
				`{"name":"echo","name":"run_cmd"}`,
				`{"name":"echo","\u004eame":"run_cmd"}`,
				`{"name":"echo","NAMe":"run_cmd"}`,
				`{"name":["run_cmd"]}`,
				`{"name":5}`,
				`["run_cmd"]`,
				`"run_cmd"`,
				`{}`,
			} {
				c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 100+i, params))
				m := c.recv()
				if m.Error == nil || m.Error.Code != CodeDenied || string(m.ID) != fmt.Sprint(100+i) {
					t.Errorf("params %s: answer %+v, want error %d for id %d", params, m, CodeDenied, 100+i)
				}
			}
			c.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"run_cmd","arguments":{}}}`)
			c.send(`{"jsonrpc":"2.0","id":"ok","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
			if m := c.recv(); m.Error != nil || string(m.ID) != `"ok"` {
				t.Fatalf("echo: %+v", m)
			}
			// The upstream saw the echo only: the notification and the
			// unreadable calls were dropped.
			if got := up.called(); len(got) != 1 || !strings.Contains(got[0], `"echo"`) {
				t.Errorf("upstream was sent tools/call %q, want only the echo", got)
			}
			up.mu.Lock()
			up.calls = nil
			up.mu.Unlock()
		})
	}
}

// TestReusedID: a tools/call reusing the id of a tools/list in flight does
// not turn the list's answer into the call's (passed unlabelled and
// unfiltered).
func TestReusedID(t *testing.T) {
	hold := make(chan struct{})
	var listed atomic.Int32
	up := newScriptUpstream(t, `[`+toolEcho+`,`+toolRun+`]`, func(w http.ResponseWriter, method string, id, _ json.RawMessage) bool {
		if method == "tools/list" && listed.Add(1) == 2 {
			<-hold // the second list waits until the reused id was sent
		}
		return false
	})
	p := newProxy(t, Upstream{URL: up.URL}, Policy{Hide: []string{"command-string"}})
	c := rawStdio(t, p)
	c.handshake()
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	m := c.recv() // the call, refused: its id is in flight
	if m.Error == nil || m.Error.Code != CodeInvalidRequest {
		t.Errorf("reused id: %+v, want error %d", m, CodeInvalidRequest)
	}
	close(hold)
	m = c.recv()
	if string(m.ID) != "5" || m.Result == nil {
		t.Fatalf("list: %+v", m)
	}
	if bytes.Contains(m.Result, []byte("run_cmd")) || !bytes.Contains(m.Result, []byte(MetaKey)) {
		t.Errorf("the list went out unfiltered or unlabelled: %s", m.Result)
	}
}

// TestListFailsClosed: a second tool of a hidden tool's name does not make
// it callable, and a tool the decoder rejects is not listed under --hide
// (nor callable under either policy).
func TestListFailsClosed(t *testing.T) {
	dupe := `{"name":"run_cmd","description":"harmless","inputSchema":{"type":"object"}}`
	// Nesting past the census decoder's depth (Python's recursion
	// limit), within the JSON-RPC decoder's.
	rejected := `{"name":"odd","inputSchema":{"type":"object","x":` + strings.Repeat("[", 990) + strings.Repeat("]", 990) + `}}`
	up := newScriptUpstream(t, `[`+toolEcho+`,`+toolRun+`,`+dupe+`,`+rejected+`]`, nil)
	p0 := newProxy(t, Upstream{URL: up.URL}, Policy{})
	c0 := rawStdio(t, p0)
	if m := c0.handshake(); !bytes.Contains(m.Result, []byte(`"odd"`)) {
		t.Fatalf("without a policy the rejected tool must pass: %+v", m.Error)
	}
	if testCounter(t, p0, "atlas_proxy_tools_unlabelled_total", "") != 1 {
		t.Fatal("the odd tool was not rejected by the decoder: the test does not test")
	}
	for _, pol := range []Policy{{Hide: []string{"command-string"}}, {Deny: []string{"command-string"}}} {
		t.Run(fmt.Sprint(pol.Hide, pol.Deny), func(t *testing.T) {
			p := newProxy(t, Upstream{URL: up.URL}, pol)
			c := rawStdio(t, p)
			list := c.handshake()
			hide := len(pol.Hide) > 0
			// Under --hide the hidden run_cmd is dropped and its
			// harmless namesake kept (each tool by its own classes);
			// calling the name is refused either way.
			want := 2
			if hide {
				want = 1
			}
			if got := bytes.Count(list.Result, []byte(`"run_cmd"`)); got != want || hide && !bytes.Contains(list.Result, []byte(`"harmless"`)) {
				t.Errorf("run_cmd listed %d times under %+v, want %d (the harmless one): %s", got, pol, want, list.Result)
			}
			if got := bytes.Contains(list.Result, []byte(`"odd"`)); got == hide {
				t.Errorf("odd listed %v under %+v: %s", got, pol, list.Result)
			}
			for _, name := range []string{"run_cmd", "odd"} {
				c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`)
				if m := c.recv(); m.Error == nil || m.Error.Code != CodeDenied {
					t.Errorf("call %s: %+v, want refused", name, m)
				}
			}
			if got := up.called(); len(got) != 0 {
				t.Errorf("upstream was sent %q", got)
			}
		})
	}
}

// TestForgedLabel: a server's own param-risk key, a _meta that is null or
// a string, or a _meta given twice, leaves the proxy as one _meta object
// holding one key, ours; through two proxies in a row, still one.
func TestForgedLabel(t *testing.T) {
	forged := `{"classes":[],"required_classes":[],"properties":[],"rules":"forged"}`
	tools := `[` +
		`{"name":"a","inputSchema":{"type":"object","properties":{"command":{"type":"string"}}},"_meta":{"` + MetaKey + `":` + forged + `}},` +
		`{"name":"b","inputSchema":{"type":"object"},"_meta":null},` +
		`{"name":"c","inputSchema":{"type":"object"},"_meta":"x"},` +
		`{"_meta":{"` + MetaKey + `":` + forged + `},"name":"d","inputSchema":{"type":"object"},"_meta":{"v":1}}` +
		`]`
	up := newScriptUpstream(t, tools, nil)
	p1 := newProxy(t, Upstream{URL: up.URL}, Policy{})
	p2 := newProxy(t, Upstream{URL: serveHTTP(t, p1) + "/mcp"}, Policy{})
	for name, p := range map[string]*Proxy{"one proxy": p1, "two proxies": p2} {
		t.Run(name, func(t *testing.T) {
			m := rawStdio(t, p).handshake()
			var res struct{ Tools []json.RawMessage }
			if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Tools) != 4 {
				t.Fatalf("list %s: %v", m.Result, err)
			}
			for _, tool := range res.Tools {
				if n := bytes.Count(tool, []byte(`"_meta"`)); n != 1 {
					t.Errorf("%s: %d _meta members", tool, n)
				}
				if n := bytes.Count(tool, []byte(MetaKey)); n != 1 {
					t.Errorf("%s: %d param-risk keys", tool, n)
				}
				if bytes.Contains(tool, []byte("forged")) {
					t.Errorf("%s: the forged label survived", tool)
				}
			}
			if !bytes.Contains(res.Tools[0], []byte(`"gg:command-string"`)) {
				t.Errorf("tool a lost its own label: %s", res.Tools[0])
			}
			if got := testCounter(t, p, "atlas_proxy_labels_replaced_total", ""); got < 4 {
				t.Errorf("replaced %v labels, want 4 counted", got)
			}
		})
	}
}

// TestGuard: /mcp refuses what a web page could send through the browser
// (a foreign Origin, a rebound Host, a text/plain body), before any
// upstream session or process exists for it.
func TestGuard(t *testing.T) {
	var connects atomic.Int32
	srv := upstreamServer(nil, nil)
	p := newProxy(t, Upstream{Transport: func() mcp.Transport {
		connects.Add(1)
		ct, st := mcp.NewInMemoryTransports()
		go srv.Run(context.Background(), st)
		return ct
	}}, Policy{})
	base := serveHTTP(t, p)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	host := strings.TrimPrefix(base, "http://")
	cases := []struct {
		name   string
		header map[string]string
		host   string
		want   int
	}{
		{"foreign origin", map[string]string{"Origin": "http://evil.example"}, "", http.StatusForbidden},
		{"null origin", map[string]string{"Origin": "null"}, "", http.StatusForbidden},
		{"origin on another port", map[string]string{"Origin": "http://127.0.0.1:1"}, "", http.StatusForbidden},
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, "", http.StatusForbidden},
		{"rebound host", nil, "evil.example", http.StatusForbidden},
		{"rebound host with port", nil, "evil.example:" + strings.Split(host, ":")[1], http.StatusForbidden},
		{"text/plain", map[string]string{"Content-Type": "text/plain"}, "", http.StatusUnsupportedMediaType},
		{"form", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "", http.StatusUnsupportedMediaType},
		{"no accept", map[string]string{"Accept": "application/json"}, "", http.StatusBadRequest},
		{"own origin", map[string]string{"Origin": base}, "", http.StatusOK},
		{"localhost", nil, "localhost:" + strings.Split(host, ":")[1], http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := connects.Load()
			req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			if c.host != "" {
				req.Host = c.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("status %d, want %d", resp.StatusCode, c.want)
			}
			if opened := connects.Load() - before; (opened > 0) != (c.want == http.StatusOK) {
				t.Errorf("%d upstream sessions opened", opened)
			}
		})
	}
}

// bigListSize is the tools/list line of bigListServer: past the SDK's 16
// MiB line cap, within the proxy's 64 MiB.
const bigListSize = 21 << 20

// bigListServer is a stdio MCP server, written raw, whose tools/list
// answer is one line of bigListSize bytes.
func bigListServer(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	bw := bufio.NewWriter(w)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		switch msg.Method {
		case "initialize":
			fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}}`+"\n", msg.ID)
		case "tools/list":
			// Tools of 64 KiB each (the labeller takes tools of up to
			// 4 MiB), in one line.
			fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, msg.ID)
			desc := strings.Repeat("x", 64<<10)
			for i := range bigListSize / (64 << 10) {
				if i > 0 {
					bw.WriteByte(',')
				}
				fmt.Fprintf(bw, `{"name":"t%d","inputSchema":{"type":"object"},"description":"%s"}`, i, desc)
			}
			bw.WriteString("]}}\n")
		default:
			fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", msg.ID)
		}
		bw.Flush()
	}
}

// TestStdioErrors: a stdio client's bad line is answered -32700 and the
// session goes on; a stdio upstream's 21 MB line passes; an upstream
// failure keeps the request's numeric id; an upstream command that exits
// at once (a missing folder) answers the client's initialize with an
// error for its id, over stdio and, with an HTTP error status, over HTTP.
func TestStdioErrors(t *testing.T) {
	t.Run("bad line", func(t *testing.T) {
		c := rawStdio(t, newProxy(t, stdioUpstream(t), Policy{}))
		c.handshake()
		c.send(`{"jsonrpc":"2.0","id":1,"method":`)
		if m := c.recv(); m.Error == nil || m.Error.Code != CodeParse {
			t.Errorf("bad line: %+v, want %d", m, CodeParse)
		}
		c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if m := c.recv(); m.Error != nil || string(m.ID) != "2" {
			t.Errorf("ping after the bad line: %+v", m)
		}
	})
	t.Run("21 MB line", func(t *testing.T) {
		up := stdioUpstream(t)
		up.Env = append(os.Environ(), stdioServerEnv+"=big")
		m := rawStdio(t, newProxy(t, up, Policy{})).handshake()
		if m.Error != nil || len(m.Result) < bigListSize || bytes.Count(m.Result, []byte(MetaKey)) != bigListSize/(64<<10) {
			t.Errorf("tools/list of %d bytes: error %+v", len(m.Result), m.Error)
		}
	})
	t.Run("numeric id of a dying upstream", func(t *testing.T) {
		c := rawStdio(t, newProxy(t, stdioUpstream(t), Policy{}))
		c.handshake()
		c.send(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"die","arguments":{}}}`)
		if m := c.recv(); m.Error == nil || m.Error.Code != CodeUpstream || string(m.ID) != "42" {
			t.Errorf("call: %+v (id %s), want error %d for id 42", m.Error, m.ID, CodeUpstream)
		}
		c.send(`{"jsonrpc":"2.0","id":43,"method":"ping"}`)
		if m := c.recv(); m.Error == nil || string(m.ID) != "43" {
			t.Errorf("a call after the failure: %+v (id %s), want the upstream's error", m.Error, m.ID)
		}
	})
	exits := Upstream{Command: []string{"sh", "-c", "echo 'no such folder' >&2; exit 1"}}
	init := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	t.Run("upstream exits, stdio", func(t *testing.T) {
		c := rawStdio(t, newProxy(t, exits, Policy{}))
		c.send(init)
		if m := c.recv(); m.Error == nil || m.Error.Code != CodeUpstream || string(m.ID) != "7" {
			t.Errorf("initialize: %+v (id %s), want error %d for id 7", m.Error, m.ID, CodeUpstream)
		}
	})
	t.Run("upstream exits, http", func(t *testing.T) {
		p := newProxy(t, exits, Policy{})
		resp := postMCP(t, serveHTTP(t, p), init, nil)
		var m rpcMsg
		json.Unmarshal(resp.body, &m)
		if resp.code < 400 || m.Error == nil || m.Error.Code != CodeUpstream || string(m.ID) != "7" {
			t.Errorf("initialize: HTTP %d %s, want an error status and error %d for id 7", resp.code, resp.body, CodeUpstream)
		}
		if n := p.sessions.count(); n != 0 {
			t.Errorf("%d sessions left", n)
		}
	})
}

type httpAnswer struct {
	code   int
	header http.Header
	body   []byte
}

// postMCP posts body to base/mcp as a Streamable HTTP client would.
func postMCP(t *testing.T, base, body string, header map[string]string) httpAnswer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpAnswer{resp.StatusCode, resp.Header, b}
}

// TestRelayUnknown: what the proxy does not understand passes: a task
// method through the HTTP downstream (the SDK's transport refuses
// methods it does not know), a notification of an unknown method, and an
// upstream's JSON-RPC error inside an HTTP 4xx, code, message and data.
func TestRelayUnknown(t *testing.T) {
	var seen sync.Map
	up := newScriptUpstream(t, `[`+toolEcho+`]`, func(w http.ResponseWriter, method string, id, params json.RawMessage) bool {
		seen.Store(method, string(params))
		switch {
		case method == "tasks/get":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"taskId":"t1", "status":"working","x-vendor":[1.50,{"k":null}]}}`, id)
			return true
		case method == "tools/call" && bytes.Contains(params, []byte(`"negotiate"`)):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28"]}}}`, id)
			return true
		}
		return false
	})
	p := newProxy(t, Upstream{URL: up.URL}, Policy{})
	base := serveHTTP(t, p)
	init := postMCP(t, base, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	sid := init.header.Get(sessionHeader)
	if init.code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", init.code, init.body)
	}
	hdr := map[string]string{sessionHeader: sid, "Mcp-Protocol-Version": "2025-06-18"}
	postMCP(t, base, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)

	got := postMCP(t, base, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t1"}}`, hdr)
	var m rpcMsg
	if err := json.Unmarshal(got.body, &m); err != nil || got.code != http.StatusOK {
		t.Fatalf("tasks/get: HTTP %d %s", got.code, got.body)
	}
	// Byte for byte but for insignificant whitespace, which the JSON-RPC
	// encoder drops: numbers, nulls and unknown members as they came.
	if want := `{"taskId":"t1","status":"working","x-vendor":[1.50,{"k":null}]}`; string(m.Result) != want {
		t.Errorf("tasks/get result %s, want %s", m.Result, want)
	}
	got = postMCP(t, base, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1"}}`, hdr)
	if got.code != http.StatusAccepted {
		t.Errorf("unknown notification: HTTP %d %s", got.code, got.body)
	}
	if v, ok := seen.Load("notifications/tasks/status"); !ok || v != `{"taskId":"t1"}` {
		t.Errorf("the unknown notification reached the upstream as %v", v)
	}

	c := rawStdio(t, p)
	c.handshake()
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"negotiate","arguments":{}}}`)
	m = c.recv()
	if m.Error == nil || m.Error.Code != -32022 || m.Error.Message != "unsupported protocol version" || string(m.Error.Data) != `{"supported":["2026-07-28"]}` {
		t.Errorf("error inside HTTP 400: %+v, want the upstream's as it came", m.Error)
	}
}

// TestUpstreamOrigin: the proxy's upstream requests stay at the
// upstream's origin: a 307 on initialize does not repost the client's
// message to another port, a legacy SSE endpoint event naming another
// origin gets nothing; and a legacy SSE server at a path not ending in
// /sse is reached by falling back, as the crawl does.
func TestUpstreamOrigin(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message?sessionid=1\n\n", other.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer endpoint.Close()
	for _, c := range []struct{ name, url string }{
		{"307 to another port", redirect.URL + "/mcp"},
		{"SSE endpoint on another origin", endpoint.URL + "/sse"},
		{"SSE endpoint on another origin, found by fallback", endpoint.URL + "/events"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := rawStdio(t, newProxy(t, Upstream{URL: c.url}, Policy{}))
			cl.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			if m := cl.recv(); m.Error == nil {
				t.Errorf("initialize answered %s", m.Result)
			}
			if n := elsewhere.Load(); n != 0 {
				t.Errorf("%d requests reached the other origin", n)
			}
		})
	}
	t.Run("legacy SSE at /events", func(t *testing.T) {
		up := sdkUpstreamSSE(t, upstreamServer(nil, nil))
		m := rawStdio(t, newProxy(t, Upstream{URL: up.URL + "/events"}, Policy{})).handshake()
		if m.Error != nil || !bytes.Contains(m.Result, []byte(`"read_file"`)) {
			t.Errorf("tools/list: %+v %s", m.Error, m.Result)
		}
	})
}

// TestCallCap: a batch of many calls waits its turn upstream: no more
// than MaxSessionCalls are posted at once.
func TestCallCap(t *testing.T) {
	const limit, calls = 4, 60
	var mu sync.Mutex
	active, peak := 0, 0
	arrived := make(chan struct{}, calls)
	release := make(chan struct{})
	up := newScriptUpstream(t, `[`+toolEcho+`]`, func(w http.ResponseWriter, method string, id, _ json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		mu.Lock()
		active++
		peak = max(peak, active)
		mu.Unlock()
		arrived <- struct{}{}
		<-release
		mu.Lock()
		active--
		mu.Unlock()
		return false
	})
	p, err := New(Config{Upstream: Upstream{URL: up.URL}, MaxSessionCalls: limit})
	if err != nil {
		t.Fatal(err)
	}
	c := rawStdio(t, p)
	c.handshake()
	var batch []string
	for i := range calls {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, 1000+i))
	}
	c.send("[" + strings.Join(batch, ",") + "]")
	for range calls {
		<-arrived
		mu.Lock()
		if peak > limit {
			t.Errorf("%d calls upstream at once, want at most %d", peak, limit)
		}
		mu.Unlock()
		release <- struct{}{}
	}
	for range calls {
		if m := c.recv(); m.Error != nil {
			t.Errorf("call %s: %+v", m.ID, m.Error)
		}
	}
}

// TestSessionCap: sessions are bounded; an initialize beyond MaxSessions
// is answered 503 before any upstream session (or process) is made, and
// one the transport refuses leaves none behind.
func TestSessionCap(t *testing.T) {
	var connects atomic.Int32
	srv := upstreamServer(nil, nil)
	p, err := New(Config{MaxSessions: 2, Upstream: Upstream{Transport: func() mcp.Transport {
		connects.Add(1)
		ct, st := mcp.NewInMemoryTransports()
		go srv.Run(context.Background(), st)
		return ct
	}}})
	if err != nil {
		t.Fatal(err)
	}
	base := serveHTTP(t, p)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	// Refused by the transport (a POST may not resume a stream): no
	// session stays.
	if a := postMCP(t, base, init, map[string]string{"Last-Event-ID": "1"}); a.code < 400 {
		t.Fatalf("Last-Event-ID on POST: HTTP %d", a.code)
	}
	if n, c := p.sessions.count(), connects.Load(); n != 0 || c != 0 {
		t.Fatalf("%d sessions, %d upstream sessions after a refused initialize", n, c)
	}
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusServiceUnavailable} {
		before := connects.Load()
		a := postMCP(t, base, init, nil)
		if a.code != want {
			t.Errorf("initialize %d: HTTP %d %s, want %d", i, a.code, a.body, want)
		}
		if want != http.StatusOK && connects.Load() != before {
			t.Errorf("initialize %d: an upstream session was made", i)
		}
	}
}

// dupeAnswerServer is a stdio MCP server, written raw, that answers each
// tools/list twice: the second time with a tool the policy hides.
func dupeAnswerServer(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		switch msg.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"dupe","version":"1"}}}`+"\n", msg.ID)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}`+"\n", msg.ID, toolEcho)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s,%s]}}`+"\n", msg.ID, toolEcho, toolRun)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", msg.ID)
		}
	}
}

// TestUnsolicitedAnswer: with a policy on, an upstream's second answer to
// a tools/list (an answer to nothing in flight) does not reach the client
// unlabelled and unfiltered.
func TestUnsolicitedAnswer(t *testing.T) {
	up := stdioUpstream(t)
	up.Env = append(os.Environ(), stdioServerEnv+"=dupe")
	c := rawStdio(t, newProxy(t, up, Policy{Hide: []string{"command-string"}}))
	if m := c.handshake(); !bytes.Contains(m.Result, []byte(MetaKey)) {
		t.Fatalf("list %s", m.Result)
	}
	c.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := c.recv(); string(m.ID) != `"p"` {
		t.Errorf("after the list came %s %s, want the ping's answer", m.ID, m.Result)
	}
}
