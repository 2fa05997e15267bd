package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/atlas-reproduce/atlas-reproduce/report/sarif"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

var referencePy = testenv.ReferencePy()

// pyClassify runs the CPython reference's classify on JSON Lines.
func pyClassify(t testing.TB, in []byte) []byte {
	t.Helper()
	py := testenv.Python3(t)
	cmd := exec.Command(py, referencePy, "classify")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference classify: %v\n%s", err, stderr.Bytes())
	}
	return out
}

// wantTools is the answer expected for the tools whose classify output
// lines are lines: the same objects, in order, in one {"tools": [...]}.
func wantTools(lines []byte) []byte {
	objs := strings.Split(strings.TrimSuffix(string(lines), "\n"), "\n")
	if len(lines) == 0 {
		objs = nil
	}
	return []byte(`{"tools": [` + strings.Join(objs, ", ") + "]}\n")
}

// innerTools returns the tool object of every real record, as a gateway
// holds them from a tools/list result.
func innerTools(t testing.TB) [][]byte {
	t.Helper()
	var tools [][]byte
	for _, line := range realcorpus.Lines(t) {
		var rec struct {
			Tool json.RawMessage `json:"tool"`
		}
		if err := json.Unmarshal(line, &rec); err != nil || rec.Tool == nil {
			t.Fatalf("real record without a tool: %.200s", line)
		}
		tools = append(tools, rec.Tool)
	}
	return tools
}

func toolsList(tools [][]byte) []byte {
	return append(append([]byte(`{"tools": [`), bytes.Join(tools, []byte(", "))...), "]}"...)
}

// testServer starts a Server on loopback for the test; setup runs before
// it serves (to set test hooks).
func testServer(t testing.TB, cfg Config, setup ...func(*Server)) (*Server, string) {
	t.Helper()
	s := New(cfg)
	for _, f := range setup {
		f(s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, "http://" + ln.Addr().String()
}

// client is an HTTP client whose connections the test closes, so that
// goleak sees no idle connection goroutines.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func post(t *testing.T, c *http.Client, url, contentType string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	resp, err := c.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

// TestClassifyMatchesCPython posts the real schemas as JSON Lines (the
// records verbatim), as one tools/list result and one tool at a time, and
// requires the CPython reference's objects, byte for byte, in order.
func TestClassifyMatchesCPython(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after the servers stop
	_, base := testServer(t, Config{})
	c := client(t)
	url := base + "/v1/classify"

	corpus := realcorpus.MustRead(t)
	code, h, got := post(t, c, url, "application/x-ndjson", corpus)
	if want := wantTools(pyClassify(t, corpus)); code != 200 || !bytes.Equal(got, want) {
		t.Fatalf("JSON Lines: status %d, %d bytes; want 200 and the reference's %d bytes\n got: %.300s\nwant: %.300s", code, len(got), len(want), got, want)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}

	tools := innerTools(t)
	ref := pyClassify(t, append(bytes.Join(tools, []byte("\n")), '\n'))
	if code, _, got := post(t, c, url, "application/json", toolsList(tools)); code != 200 || !bytes.Equal(got, wantTools(ref)) {
		t.Fatalf(`{"tools": [...]}: status %d, got %.300s`, code, got)
	}
	refLines := bytes.SplitAfter(ref, []byte("\n"))
	if len(refLines) != realcorpus.Tools+1 {
		t.Fatalf("reference gave %d lines", len(refLines))
	}
	// One tool per request, from 8 clients at once: pooled labellers and
	// buffers must not leak one request's labels into another's answer.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(tools); i += 8 {
				resp, err := c.Post(url, "application/json", bytes.NewReader(tools[i]))
				if err != nil {
					t.Error(err)
					return
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := wantTools(refLines[i]); resp.StatusCode != 200 || !bytes.Equal(got, want) {
					t.Errorf("tool %d: status %d\n got: %s\nwant: %s", i, resp.StatusCode, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestClassifyBodyForms covers each accepted body against the labeller the
// classify command uses, and the SARIF answer against classify's writer.
func TestClassifyBodyForms(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after the servers stop
	_, base := testServer(t, Config{})
	c := client(t)
	tool := `{"name": "deploy", "inputSchema": {"properties": {"api_key": {}, "target_path": {"description": "where"}}, "required": ["api_key"]}}`
	schema := `{"type": "object", "properties": {"webhook_url": {}, "amount": {"description": "in cents"}}}`
	lines := tool + "\n\n{\"server_id\": \"s1\", \"tools\": [" + tool + ", {\"name\": \"b\"}]}\r\n" + `{"server": 7, "tool": ` + tool + `}`
	for _, tc := range []struct {
		name, contentType, body string
	}{
		{"tool", "application/json", tool},
		{"bare schema", "application/json", schema},
		{"multi-line bare schema", "application/json", "{\n  \"properties\": {\n    \"sql\": {}\n  }\n}\n"},
		{"tools/list result", "application/json", `{"tools": [` + tool + `, {"name": "x", "inputSchema": ` + schema + `}]}`},
		{"record with a tool", "application/json", `{"server_id": "srv", "tool": ` + tool + `}`},
		{"form content type", "application/x-www-form-urlencoded", tool},
		{"JSON Lines", "application/x-ndjson", lines},
		{"JSON Lines with charset", "application/x-ndjson; charset=utf-8", lines},
		{"empty JSON Lines", "application/x-ndjson", ""},
		{"empty tools", "application/json", `{"tools": []}`},
	} {
		var want []byte
		var sarifWant bytes.Buffer
		sw := sarif.NewWriter()
		emit := func(o label.Origin, tl *label.ToolLabels) error {
			want = tl.AppendJSON(want)
			sw.Add(o, tl)
			return nil
		}
		l := label.NewLabeller()
		var err error
		if strings.Contains(tc.contentType, "ndjson") {
			err = l.ClassifyStream(strings.NewReader(tc.body), "request", emit)
		} else {
			err = l.ClassifyDocument([]byte(tc.body), "request", emit)
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sw.WriteTo(&sarifWant)
		code, _, got := post(t, c, base+"/v1/classify", tc.contentType, []byte(tc.body))
		if code != 200 || !bytes.Equal(got, wantTools(want)) {
			t.Errorf("%s: status %d\n got: %s\nwant: %s", tc.name, code, got, wantTools(want))
		}
		code, h, got := post(t, c, base+"/v1/classify?format=sarif", tc.contentType, []byte(tc.body))
		if code != 200 || !bytes.Equal(got, sarifWant.Bytes()) || h.Get("Content-Type") != "application/sarif+json" {
			t.Errorf("%s: SARIF status %d, Content-Type %q\n got: %.400s\nwant: %.400s", tc.name, code, h.Get("Content-Type"), got, sarifWant.Bytes())
		}
	}
}

// TestErrors: each bad request gets its status and a JSON {"error": ...}
// that says what and where.
func TestErrors(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after the servers stop
	_, base := testServer(t, Config{MaxBody: 1000})
	c := client(t)
	tool := `{"name": "a", "inputSchema": {"properties": {"path": {}}}}`
	for _, tc := range []struct {
		name, method, path, contentType, body string
		code                                  int
		error                                 string // a regexp
		line                                  int64
		offset                                int // -1: none
		allow                                 string
	}{
		{"invalid JSON", "POST", "/v1/classify", "application/json", `{"name": "a",}`, 400, `^Expecting property name enclosed in double quotes at byte 13$`, 0, 13, ""},
		{"invalid JSON deep in a document", "POST", "/v1/classify", "application/json", "{\n \"properties\": {\"a\": tru}}", 400, `^Expecting value at byte 23$`, 0, 23, ""},
		{"empty document", "POST", "/v1/classify", "application/json", ``, 400, `^Expecting value at byte 0$`, 0, 0, ""},
		{"bad JSON line", "POST", "/v1/classify", "application/x-ndjson", tool + "\n\n" + `{"a": [1,]}` + "\n" + tool, 400, `^line 3: Expecting value at byte 9$`, 3, 9, ""},
		{"invalid UTF-8", "POST", "/v1/classify", "application/json", "{\"name\": \"\xff\"}", 400, `^invalid UTF-8 at byte 10$`, 0, 10, ""},
		{"not a record", "POST", "/v1/classify", "application/json", `[1, 2]`, 400, `^record is not a JSON object$`, 0, -1, ""},
		{"tools not a list", "POST", "/v1/classify", "application/x-ndjson", `{"tools": 3}`, 400, `^line 1: "tools" is not a list$`, 1, -1, ""},
		{"bad format", "POST", "/v1/classify?format=xml", "application/json", tool, 400, `format "xml"`, 0, -1, ""},
		{"too large", "POST", "/v1/classify", "application/json", `{"name": "` + strings.Repeat("x", 1000) + `"}`, 413, `exceeds the limit of 1000 bytes`, 0, -1, ""},
		{"GET classify", "GET", "/v1/classify", "", "", 405, `method GET not allowed; use POST`, 0, -1, "POST"},
		{"PUT classify", "PUT", "/v1/classify", "application/json", tool, 405, `use POST`, 0, -1, "POST"},
		{"POST healthz", "POST", "/healthz", "application/json", "", 405, `use GET`, 0, -1, "GET"},
		{"DELETE metrics", "DELETE", "/metrics", "", "", 405, `use GET`, 0, -1, "GET"},
		{"GET mcp", "GET", "/mcp", "", "", 405, `use POST`, 0, -1, "POST"},
		{"no such endpoint", "GET", "/v2/classify", "", "", 404, `no such endpoint: /v2/classify`, 0, -1, ""},
		{"MCP without Accept", "POST", "/mcp", "application/json", `{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}`, 400, `^Accept must contain both 'application/json' and 'text/event-stream'$`, 0, -1, ""},
		{"MCP as text", "POST", "/mcp", "text/plain", `{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}`, 415, `^Content-Type must be 'application/json'$`, 0, -1, ""},
		{"MCP too large", "POST", "/mcp", "application/json", strings.Repeat(" ", 1001), 413, `exceeds the limit of 1000 bytes`, 0, -1, ""},
	} {
		req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error  *string `json:"error"`
			Line   int64   `json:"line"`
			Offset *int    `json:"offset"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
			t.Errorf("%s: body %q is not a JSON error (%v)", tc.name, body, err)
			continue
		}
		if resp.StatusCode != tc.code || !regexp.MustCompile(tc.error).MatchString(*e.Error) || e.Line != tc.line ||
			(tc.offset < 0) != (e.Offset == nil) || (e.Offset != nil && *e.Offset != tc.offset) {
			t.Errorf("%s: status %d, body %s; want %d, error ~ %q, line %d, offset %d", tc.name, resp.StatusCode, body, tc.code, tc.error, tc.line, tc.offset)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", tc.name, ct)
		}
		if got := resp.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s: Allow %q, want %q", tc.name, got, tc.allow)
		}
	}
}

// endless is a body that never ends, counting what is read of it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestOversizedBodyIsNotRead: a body over the limit, with no length
// announced, is refused after at most one byte past the limit.
func TestOversizedBodyIsNotRead(t *testing.T) {
	const limit = 64 << 10
	s := New(Config{MaxBody: limit})
	for _, ct := range []string{"application/json", "application/x-ndjson"} {
		body := &endless{}
		req := httptest.NewRequest("POST", "/v1/classify", io.NopCloser(body))
		req.ContentLength = -1
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != 413 || !strings.Contains(rec.Body.String(), `"error"`) {
			t.Errorf("%s: status %d, body %s", ct, rec.Code, rec.Body.Bytes())
		}
		if body.n > limit+1 {
			t.Errorf("%s: read %d bytes of a body over the %d-byte limit", ct, body.n, limit)
		}
	}
	// An announced length over the limit is refused before any of it is read.
	body := &endless{}
	req := httptest.NewRequest("POST", "/v1/classify", io.NopCloser(body))
	req.ContentLength = limit + 1
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != 413 || body.n != 0 {
		t.Errorf("announced length: status %d, %d bytes read", rec.Code, body.n)
	}
}

// drip sends msg a byte per interval on conn, a client connection, and
// returns how many bytes went out before the server closed the connection,
// and what it answered.
func drip(conn net.Conn, msg string, interval time.Duration) (int, string) {
	defer conn.Close()
	closed := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(conn) // returns once the server closes
		closed <- b
	}()
	for i := 0; i < len(msg); i++ {
		select {
		case b := <-closed:
			return i, string(b)
		case <-time.After(interval):
		}
		if _, err := conn.Write([]byte{msg[i]}); err != nil {
			conn.Close()
			return i, string(<-closed)
		}
	}
	conn.Close()
	return len(msg), string(<-closed)
}

// TestDrippingClientIsCutOff: a client that sends its headers or its body
// a byte per 100 ms is disconnected by the read timeouts long before it is
// done, so it cannot hold a connection's goroutine forever. The server runs
// in a testing/synctest bubble on in-memory connections: the timeouts pass
// on the bubble's clock, so the bytes taken are the same on a busy machine.
func TestDrippingClientIsCutOff(t *testing.T) {
	body := `{"name": "a", "inputSchema": {"properties": {"api_key": {}}}}` + strings.Repeat(" ", 40)
	head := "POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	for _, tc := range []struct {
		name      string
		sendFirst string // sent at once
		dripped   string // then a byte per 100 ms
		max       int
	}{
		// 300 ms of headers is 3 bytes.
		{"headers", "", head + body, 3},
		// 600 ms for the whole request, the headers sent at once: 6 bytes.
		{"body", head, body, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ln := newPipeListener()
				s := New(Config{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 600 * time.Millisecond, WriteTimeout: time.Second})
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- s.Serve(ctx, ln) }()
				defer func() {
					cancel()
					if err := <-done; err != nil {
						t.Errorf("Serve: %v", err)
					}
				}()
				conn := ln.dial()
				if _, err := io.WriteString(conn, tc.sendFirst); err != nil {
					t.Fatal(err)
				}
				sent, answer := drip(conn, tc.dripped, 100*time.Millisecond)
				if sent > tc.max {
					t.Errorf("the server took %d bytes at a byte per 100 ms before closing (want at most %d)", sent, tc.max)
				}
				if strings.Contains(answer, "200 OK") {
					t.Errorf("a dripped request was answered 200: %q", answer)
				}
				t.Logf("cut off after %d bytes, answer %q", sent, answer)
			})
		})
	}
}

var metricLine = regexp.MustCompile(`(?m)^([a-z_]+)(\{[^}]*\})? (\S+)$`)

func scrape(t *testing.T, c *http.Client, base string) map[string]float64 {
	t.Helper()
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	m := map[string]float64{}
	for _, g := range metricLine.FindAllStringSubmatch(string(b), -1) {
		v, err := strconv.ParseFloat(g[3], 64)
		if err != nil {
			t.Fatalf("metric %q: %v", g[0], err)
		}
		m[g[1]+g[2]] = v
	}
	return m
}

// TestHealthzAndMetrics: two servers in one process keep separate counts
// of requests, tools and properties.
func TestHealthzAndMetrics(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after the servers stop
	_, a := testServer(t, Config{})
	_, b := testServer(t, Config{})
	c := client(t)
	resp, err := c.Get(a + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(hb) != "ok\n" {
		t.Fatalf("/healthz: %d %q", resp.StatusCode, hb)
	}
	tool := `{"name": "a", "inputSchema": {"properties": {"path": {}, "url": {}, "x": {}}}}`
	for range 3 {
		post(t, c, a+"/v1/classify", "application/json", []byte(`{"tools": [`+tool+", "+tool+`]}`))
	}
	post(t, c, a+"/v1/classify", "application/json", []byte(`{`))
	post(t, c, b+"/v1/classify", "application/json", []byte(tool))
	ma, mb := scrape(t, c, a), scrape(t, c, b)
	for _, tc := range []struct {
		m    map[string]float64
		name string
		want float64
	}{
		{ma, `atlas_serve_requests_total{code="200",route="/v1/classify"}`, 3},
		{ma, `atlas_serve_requests_total{code="400",route="/v1/classify"}`, 1},
		{ma, `atlas_serve_requests_total{code="200",route="/healthz"}`, 1},
		{ma, `atlas_serve_request_duration_seconds_count{route="/v1/classify"}`, 4},
		{ma, `atlas_serve_tools_classified_total`, 6},
		{ma, `atlas_serve_properties_classified_total`, 18},
		{mb, `atlas_serve_requests_total{code="200",route="/v1/classify"}`, 1},
		{mb, `atlas_serve_tools_classified_total`, 1},
		{mb, `atlas_serve_properties_classified_total`, 3},
	} {
		if got, ok := tc.m[tc.name]; !ok || got != tc.want {
			t.Errorf("%s = %v (present %v), want %v", tc.name, got, ok, tc.want)
		}
	}
	if _, ok := ma["go_goroutines"]; !ok {
		t.Errorf("no Go runtime metrics")
	}
}

// TestShutdownDrainsInFlight: cancelling Serve's context stops accepting
// at once, lets a request whose body is still arriving finish, and returns
// nil; a request that outlives the bound makes it return an error.
func TestShutdownDrainsInFlight(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after the servers stop
	for _, tc := range []struct {
		name    string
		bound   time.Duration
		finish  bool
		wantErr bool
	}{
		{"drained", 5 * time.Second, true, false},
		{"cut off", 200 * time.Millisecond, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drained := make(chan struct{})
			s := New(Config{ShutdownTimeout: tc.bound, OnDrain: func() { close(drained) }})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Serve(ctx, ln) }()
			body := `{"name": "a", "inputSchema": {"properties": {"api_key": {}}}}`
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// net/http sends 100 Continue when the handler first reads the
			// body: from then on the request is in flight.
			io.WriteString(conn, "POST /v1/classify HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body[:10])
			br := bufio.NewReader(conn)
			if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
				t.Fatalf("waiting for 100 Continue: %q %v", line, err)
			}
			br.ReadString('\n') // the blank line that ends it
			cancel()
			<-drained
			// The listener is closed: new connections are refused.
			if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
				c.Close()
				t.Fatal("still accepting after the context was cancelled")
			}
			if tc.finish {
				io.WriteString(conn, body[10:])
				answer, _ := io.ReadAll(br)
				if !bytes.HasPrefix(answer, []byte("HTTP/1.1 200 OK")) || !bytes.Contains(answer, []byte(`"gg:credential-value"`)) {
					t.Errorf("in-flight request answered %q", answer)
				}
			}
			err = <-done
			if (err != nil) != tc.wantErr {
				t.Errorf("Serve returned %v", err)
			}
		})
	}
}

// TestRunReportsItsAddress: Run on port 0 says where it listens.
func TestRunReportsItsAddress(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after the servers stop
	s := New(Config{Addr: "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, func(a net.Addr) { addrs <- a }) }()
	var a net.Addr
	select {
	case a = <-addrs:
	case err := <-done:
		t.Fatal(err)
	}
	c := client(t)
	resp, err := c.Get("http://" + a.String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c.Transport.(*http.Transport).CloseIdleConnections()
	cancel()
	if err := <-done; err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, Run: %v", resp.StatusCode, err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if err := New(Config{Addr: busy.Addr().String()}).Run(context.Background(), nil); err == nil {
		t.Fatal("Run on an address in use returned nil")
	}
}

// TestClassificationWaitsForRoom: while the in-flight bytes are taken, a
// complete request waits (over HTTP and MCP alike), then is answered once
// they are released.
func TestClassificationWaitsForRoom(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after the servers stop
	waiting := make(chan struct{}, 1)
	s, base := testServer(t, Config{MaxBody: 1000, MaxInFlight: 1000}, func(s *Server) {
		s.testHookWaiting = func() { waiting <- struct{}{} }
	})
	c := client(t)
	for _, path := range []string{"/v1/classify", "/mcp"} {
		release, err := s.admit(context.Background(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		answered := make(chan int, 1)
		go func() {
			req, _ := http.NewRequest("POST", base+path, strings.NewReader(`{"name": "a"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := c.Do(req)
			if err != nil {
				answered <- -1
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answered <- resp.StatusCode
		}()
		select {
		case code := <-answered:
			t.Fatalf("%s: answered %d while the in-flight bytes were all taken", path, code)
		case <-waiting:
		}
		select {
		case code := <-answered:
			t.Fatalf("%s: answered %d while waiting for room", path, code)
		default:
		}
		release()
		if code := <-answered; code == -1 || (path == "/v1/classify" && code != 200) {
			t.Fatalf("%s: answered %d after the bytes were released", path, code)
		}
	}
}
