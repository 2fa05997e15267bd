package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

// manyTools is {"tools": [...]} of n copies of tool.
func manyTools(n int, tool string) []byte {
	return []byte(`{"tools": [` + strings.TrimSuffix(strings.Repeat(tool+", ", n), ", ") + `]}`)
}

// manyLines is n lines of tool, as JSON Lines.
func manyLines(n int, tool string) []byte {
	return []byte(strings.Repeat(tool+"\n", n))
}

// labellerAnswer is the answer the classify command's labeller gives for
// body, in the /v1/classify JSON form.
func labellerAnswer(t *testing.T, body []byte, jsonLines bool) []byte {
	t.Helper()
	var want []byte
	emit := func(_ label.Origin, tl *label.ToolLabels) error { want = tl.AppendJSON(want); return nil }
	var err error
	if jsonLines {
		err = label.NewLabeller().ClassifyStream(bytes.NewReader(body), "request", emit)
	} else {
		err = label.NewLabeller().ClassifyDocument(body, "request", emit)
	}
	if err != nil {
		t.Fatal(err)
	}
	return wantTools(want)
}

// TestMaxTools: a request of more tools than --max-tools is refused with
// 413 naming the flag and the limit, whichever way the tools come and
// whether or not the answer would have been streamed; the limit itself is
// answered.
func TestMaxTools(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after the servers stop
	const limit = 20_000
	_, base := testServer(t, Config{MaxTools: limit})
	c := client(t)
	tool := `{"name": "deploy", "inputSchema": {"properties": {"api_key": {}}}}`
	for _, tc := range []struct {
		name, path, contentType string
		body                    []byte
		code                    int
	}{
		{"list at the limit", "/v1/classify", "application/json", manyTools(limit, tool), 200},
		{"list over the limit", "/v1/classify", "application/json", manyTools(limit+1, tool), 413},
		{"empty tools over the limit", "/v1/classify", "application/json", manyTools(limit+1, "{}"), 413},
		{"lines at the limit", "/v1/classify", "application/x-ndjson", manyLines(limit, tool), 200},
		{"lines over the limit", "/v1/classify", "application/x-ndjson", manyLines(limit+1, tool), 413},
		{"SARIF over the limit", "/v1/classify?format=sarif", "application/json", manyTools(limit+1, "{}"), 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, h, got := post(t, c, base+tc.path, tc.contentType, tc.body)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %.300s", code, tc.code, got)
			}
			if tc.code == 413 {
				var e apiError
				if err := json.Unmarshal(got, &e); err != nil || !strings.Contains(e.Error, "--max-tools") || !strings.Contains(e.Error, strconv.Itoa(limit)) {
					t.Fatalf("413 body %s does not name --max-tools and %d", got, limit)
				}
				return
			}
			// The answer at the limit is over a megabyte: streamed, and
			// equal to the labeller's byte for byte.
			if want := labellerAnswer(t, tc.body, tc.contentType == "application/x-ndjson"); !bytes.Equal(got, want) {
				t.Fatalf("streamed answer of %d bytes differs from the labeller's %d", len(got), len(want))
			}
			if len(got) <= holdAnswer || h.Get("Content-Length") != "" {
				t.Fatalf("answer of %d bytes with Content-Length %q: want one streamed past %d bytes", len(got), h.Get("Content-Length"), holdAnswer)
			}
		})
	}
	t.Run("MCP", func(t *testing.T) {
		cs := connectHTTP(t, base)
		got, isErr := callText(t, cs, manyTools(limit+1, "{}"))
		if !isErr || !strings.Contains(got, "--max-tools") || !strings.Contains(got, strconv.Itoa(limit)) {
			t.Fatalf("error %v, %.300s; want a tool error naming --max-tools", isErr, got)
		}
		if _, isErr := callText(t, cs, manyTools(3, tool)); isErr {
			t.Fatal("a call under the limit failed")
		}
	})
}

// TestStreamedAnswerKeepsErrors: an error in a line after the first
// megabyte of answer is still answered 400 with its line, not a 200 cut
// short: the status waits until the whole body is known to be good.
func TestStreamedAnswerKeepsErrors(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	_, base := testServer(t, Config{})
	c := client(t)
	tool := `{"name": "deploy", "inputSchema": {"properties": {"api_key": {}}}}`
	body := append(manyLines(20_000, tool), `{"name": }`+"\n"...)
	code, _, got := post(t, c, base+"/v1/classify", "application/x-ndjson", body)
	var e apiError
	if code != 400 || json.Unmarshal(got, &e) != nil || e.Line != 20_001 {
		t.Fatalf("status %d, %.300s; want 400 at line 20001", code, got)
	}
}

// TestMCPAnswerBounded: a call whose answer would pass --max-body bytes is
// a tool error, not an answer the SDK holds twice.
func TestMCPAnswerBounded(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	_, base := testServer(t, Config{MaxBody: 64 << 10})
	cs := connectHTTP(t, base)
	got, isErr := callText(t, cs, manyTools(1000, "{}")) // 3 KB of arguments, 107 KB of answer
	if !isErr || !strings.Contains(got, "exceed 65536 bytes") {
		t.Fatalf("error %v, %.200s", isErr, got)
	}
}

// rawPostAll writes a request with a body of n bytes in one go, before
// reading anything, as urllib does, then reads the answer to its end.
func rawPostAll(t *testing.T, addr string, n int) string {
	t.Helper()
	// Built before dialling: under the race detector, building 64 MiB can
	// take longer than the server waits for a request's headers.
	head := "POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n"
	req := append([]byte(head), bytes.Repeat([]byte(" "), n)...)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(req); err != nil {
		t.Fatalf("writing %d bytes: %v", n, err)
	}
	answer, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("reading the answer to %d bytes: %v", n, err)
	}
	return string(answer)
}

// urllibScript posts a body of sys.argv[2] bytes with urllib and prints
// the status and the answer's error message.
const urllibScript = `
import json, sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], data=b" " * int(sys.argv[2]), headers={"Content-Type": "application/json"})
try:
    urllib.request.urlopen(req)
    print("no error")
except urllib.error.HTTPError as e:
    print(e.code, json.load(e)["error"])
`

// TestSendAllThenReadGets413: clients that send their whole body before
// reading, Python's urllib and a raw Go connection, read the 413 for a body
// of 9 MiB and one of 64 MiB (the limit is 8 MiB), instead of a connection
// reset.
func TestSendAllThenReadGets413(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	_, base := testServer(t, Config{})
	py := testenv.Python3(t)
	for _, n := range []int{9 << 20, 64 << 20} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			out, err := exec.Command(py, "-c", urllibScript, base+"/v1/classify", strconv.Itoa(n)).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), "413 ") || !strings.Contains(string(out), "exceeds the limit") {
				t.Errorf("urllib: %v\n%s", err, out)
			}
			answer := rawPostAll(t, strings.TrimPrefix(base, "http://"), n)
			if !strings.HasPrefix(answer, "HTTP/1.1 413 ") || !strings.Contains(answer, `"error"`) {
				t.Errorf("raw connection: %.300q", answer)
			}
		})
	}
}

// TestMaxConns: with --max-conns 2 and two connections open, a third is
// not served until one of them closes.
func TestMaxConns(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	s := New(Config{MaxConns: 2})
	var mu sync.Mutex
	opened := 0
	s.testHookConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			opened++
			mu.Unlock()
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()
	get := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
	// roundTrip sends a request on a kept-alive connection and reads its
	// answer.
	roundTrip := func(conn net.Conn, br *bufio.Reader) {
		t.Helper()
		io.WriteString(conn, get)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var conns []net.Conn
	var readers []*bufio.Reader
	for range 3 {
		c, err := net.Dial("tcp", addr) // the kernel completes the third too; it waits to be accepted
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns, readers = append(conns, c), append(readers, bufio.NewReader(c))
	}
	roundTrip(conns[0], readers[0])
	roundTrip(conns[1], readers[1])
	answered := make(chan error, 1)
	io.WriteString(conns[2], get)
	go func() {
		resp, err := http.ReadResponse(readers[2], nil)
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	// The server is serving (a request on the second connection is
	// answered after the third's was sent), but has not accepted the third.
	roundTrip(conns[1], readers[1])
	mu.Lock()
	n := opened
	mu.Unlock()
	select {
	case err := <-answered:
		t.Fatalf("the third connection was answered (%v) with two open and --max-conns 2", err)
	default:
	}
	if n != 2 {
		t.Fatalf("%d connections accepted with --max-conns 2", n)
	}
	conns[0].Close()
	if err := <-answered; err != nil {
		t.Fatalf("third connection after the first closed: %v", err)
	}
}

// stdioSession runs ServeStdio on pipes and returns a function that sends
// a line and reads the answer line.
func stdioSession(t *testing.T) func(line string) map[string]any {
	t.Helper()
	s := New(Config{})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := s.ServeStdio(context.Background(), sr, sw)
		sw.Close()
		done <- err
	}()
	t.Cleanup(func() {
		cw.Close()
		io.Copy(io.Discard, cr)
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
	br := bufio.NewReader(cr)
	return func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(cw, line+"\n"); err != nil {
			t.Fatal(err)
		}
		answer, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %q: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal(answer, &m); err != nil {
			t.Fatalf("after %q, answer %q: %v", line, answer, err)
		}
		return m
	}
}

// TestStdioBadLines: a line that is not JSON is answered -32700 with a null
// id, one that is JSON but no message -32600, and the server goes on to
// answer the valid requests after them.
func TestStdioBadLines(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	send := stdioSession(t)
	errCode := func(m map[string]any) string {
		e, _ := m["error"].(map[string]any)
		return fmt.Sprint(m["id"], " ", e["code"])
	}
	for _, tc := range []struct{ line, want string }{
		{`this is not JSON`, "<nil> -32700"},
		{`{"jsonrpc": "2.0", "id": 1, "method": `, "<nil> -32700"},
		{`42`, "<nil> -32600"},
	} {
		if got := errCode(send(tc.line)); got != tc.want {
			t.Errorf("%q: id and code %s, want %s", tc.line, got, tc.want)
		}
	}
	init := send(`{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}`)
	if init["result"] == nil {
		t.Fatalf("initialize after bad lines: %v", init)
	}
	if got := errCode(send(`not JSON again`)); got != "<nil> -32700" {
		t.Errorf("in session: %s", got)
	}
	res := send(`{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "classify_tools", "arguments": {"schema": {"properties": {"api_key": {}}}}}}`)
	r, _ := res["result"].(map[string]any)
	content, _ := r["content"].([]any)
	if res["id"] != float64(2) || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), "gg:credential-value") {
		t.Fatalf("tools/call after bad lines: %v", res)
	}
}

// TestAppendToolInPieces: a tool of more properties than propsChunk is
// written in pieces that join to exactly AppendJSON's object.
func TestAppendToolInPieces(t *testing.T) {
	for _, n := range []int{0, 1, propsChunk, propsChunk + 1, 3*propsChunk + 7} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			name := "t\"x"
			tl := label.ToolLabels{Tool: &name, Classes: []string{"gg:url-endpoint"}}
			for i := range n {
				tl.Properties = append(tl.Properties, label.PropertyLabels{Name: "p" + strconv.Itoa(i), Where: "properties", Required: i%3 == 0, Classes: []string{"gg:url-endpoint"}})
			}
			want := tl.AppendJSON([]byte("x"))
			want = want[:len(want)-1]
			flushes := 0
			got, err := appendTool([]byte("x"), &tl, func(b []byte) ([]byte, error) { flushes++; return b, nil })
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("err %v; %d bytes, want %d:\n%.200s\n%.200s", err, len(got), len(want), got, want)
			}
			if wantFlushes := 1 + (n+propsChunk-1)/propsChunk; n > propsChunk && flushes != wantFlushes {
				t.Errorf("%d flushes, want %d", flushes, wantFlushes)
			}
		})
	}
}

// TestDenseToolStreamed: the answer for one tool of 100,000 properties is
// streamed, and equal to the labeller's byte for byte.
func TestDenseToolStreamed(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	_, base := testServer(t, Config{})
	var b strings.Builder
	b.WriteString(`{"name": "dense", "inputSchema": {"properties": {`)
	for i := range 100_000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"api_key_%d": {}`, i)
	}
	b.WriteString(`}}}`)
	body := []byte(b.String())
	code, h, got := post(t, client(t), base+"/v1/classify", "application/json", body)
	if want := labellerAnswer(t, body, false); code != 200 || !bytes.Equal(got, want) || h.Get("Content-Length") != "" {
		t.Fatalf("status %d, %d bytes, Content-Length %q; want 200, the labeller's %d bytes, streamed", code, len(got), h.Get("Content-Length"), len(want))
	}
}

// TestStdioAnswersBeforeEOF: a client that writes its requests and closes
// stdin at once gets every answer; the SDK alone ends the session at the
// end of input and drops the answers still being made. Run many times,
// since the loss depends on which goroutine wins.
func TestStdioAnswersBeforeEOF(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"classify_tools","arguments":{"schema":{"properties":{"api_key":{}}}}}}`,
	}, "\n") + "\n"
	for i := range 50 {
		var out bytes.Buffer
		if err := New(Config{}).ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal([]byte(line), &m) != nil || m.Result == nil {
				t.Fatalf("run %d: not an answer: %q", i, line)
			}
			ids = append(ids, string(m.ID))
		}
		sort.Strings(ids) // requests are answered concurrently
		if got := strings.Join(ids, " "); got != `"three" 1 2` {
			t.Fatalf("run %d: answers to ids %s, want \"three\" 1 2; output:\n%s", i, got, out.String())
		}
	}
}
