package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startServe runs the binary's serve on a free loopback port and returns
// the process, the address it printed and the later lines of its stderr.
func startServe(t *testing.T, args ...string) (*exec.Cmd, string, <-chan string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() {
		t.Fatalf("serve said nothing: %v", sc.Err())
	}
	m := regexp.MustCompile(`serving on http://(\S+)`).FindStringSubmatch(sc.Text())
	if m == nil {
		t.Fatalf("serve did not report its address: %q", sc.Text())
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody is listening for more
			}
		}
	}()
	return cmd, m[1], lines
}

// TestServeSIGTERMDrains: on SIGTERM and SIGINT the server stops accepting,
// says so, finishes the request whose body is still arriving, and exits 0.
func TestServeSIGTERMDrains(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, addr, lines := startServe(t)
			body := `{"name": "a", "inputSchema": {"properties": {"api_key": {"description": "the key"}}}}`
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// 100 Continue comes when the handler reads the body: the
			// request is in flight.
			io.WriteString(conn, "POST /v1/classify HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body[:20])
			br := bufio.NewReader(conn)
			if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
				t.Fatalf("waiting for 100 Continue: %q %v", line, err)
			}
			br.ReadString('\n')
			cmd.Process.Signal(sig)
			for line := range lines {
				if strings.Contains(line, "stopped accepting connections") {
					break
				}
			}
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				t.Fatal("still accepting connections after saying it stopped")
			}
			io.WriteString(conn, body[20:])
			answer, _ := io.ReadAll(br)
			if !bytes.HasPrefix(answer, []byte("HTTP/1.1 200 OK")) || !bytes.Contains(answer, []byte(`"classes": ["gg:credential-value"]`)) {
				t.Errorf("the in-flight request was answered %q", answer)
			}
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != exitOK {
				t.Errorf("exit %d, want 0", code)
			}
		})
	}
}

// TestServeStdio launches serve --stdio as an agent would, through the
// SDK's CommandTransport, and calls classify_tools.
func TestServeStdio(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--stdio")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "classify_tools",
		Arguments: json.RawMessage(`{"schema": {"properties": {"file_path": {}, "price": {"description": "in USD"}}, "required": ["price"]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools": [{"server_id": null, "tool": null, "classes": ["gg:filesystem-path", "gg:money-amount"], "required_classes": ["gg:money-amount"], "buckets": [], "properties": [{"name": "file_path", "where": "properties", "required": false, "classes": ["gg:filesystem-path"], "buckets": []}, {"name": "price", "where": "properties", "required": true, "classes": ["gg:money-amount"], "buckets": []}]}]}`
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want {
		t.Errorf("classify_tools over stdio: %+v", res.Content)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitOK {
		t.Errorf("serve --stdio exited %d after stdin closed, want 0\n%s", code, stderr.String())
	}
}

// TestServeStdioBadLine: a line that is not JSON is answered -32700 with a
// null id, and the requests after it are answered as usual.
func TestServeStdioBadLine(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}`,
		`not JSON at all`,
		`{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "classify_tools", "arguments": {"schema": {"properties": {"file_path": {}}}}}}`,
	}, "\n") + "\n"
	cmd := exec.Command(binary, "serve", "--stdio")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, in)
	// Stdin stays open until the three answers are in: at its end the
	// server stops, as an agent closing the pipe means it to.
	var answers []map[string]any
	sc := bufio.NewScanner(stdout)
	for len(answers) < 3 && sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("answer %q: %v", sc.Text(), err)
		}
		answers = append(answers, m)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve --stdio: %v\n%s", err, stderr.Bytes())
	}
	byID := map[string]map[string]any{}
	for _, a := range answers {
		byID[fmt.Sprint(a["id"])] = a
	}
	parse, _ := byID["<nil>"]["error"].(map[string]any)
	if len(answers) != 3 || parse["code"] != float64(-32700) {
		t.Fatalf("want the parse error among 3 answers: %v", answers)
	}
	if res, _ := byID["2"]["result"].(map[string]any); res == nil || !strings.Contains(fmt.Sprint(res["content"]), "gg:filesystem-path") {
		t.Fatalf("the call after the bad line: %v", byID["2"])
	}
}

func TestServeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "extra"}, {"serve", "--max-body", "0"}, {"serve", "--bogus"}, {"serve", "--max-tools", "0"},
		{"serve", "--max-conns", "-1"}, {"serve", "--max-in-flight", "100", "--max-body", "1000"},
	} {
		if _, stderr, code := run(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, stderr)
		}
	}
	// An address that cannot be bound is a failure, not a hang.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, stderr, code := run(t, "", "serve", "--listen", ln.Addr().String()); code != exitFailure || !strings.Contains(stderr, "address already in use") {
		t.Errorf("busy address: exit %d\n%s", code, stderr)
	}
}
