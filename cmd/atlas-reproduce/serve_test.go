package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startServe runs the binary's serve on a free loopback port and returns
// the process, the address it printed and the rest of its stderr.
func startServe(t *testing.T, args ...string) (*exec.Cmd, string, *bytes.Buffer) {
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
	br := bufio.NewReader(stderr)
	line, err := br.ReadString('\n')
	m := regexp.MustCompile(`serving on http://(\S+)`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("serve did not report its address: %q, %v", line, err)
	}
	rest := &bytes.Buffer{}
	go io.Copy(rest, br)
	return cmd, m[1], rest
}

// TestServeSIGTERMDrains: on SIGTERM and SIGINT the server stops accepting,
// finishes the request whose body is still arriving, and exits 0.
func TestServeSIGTERMDrains(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd, addr, _ := startServe(t)
		body := `{"name": "a", "inputSchema": {"properties": {"api_key": {"description": "the key"}}}}`
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, "POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body[:20])
		time.Sleep(200 * time.Millisecond) // the server has the headers: the request is in flight
		cmd.Process.Signal(sig)
		for i := 0; ; i++ {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				break
			}
			c.Close()
			if i == 200 {
				t.Fatalf("%v: still accepting connections", sig)
			}
			time.Sleep(10 * time.Millisecond)
		}
		io.WriteString(conn, body[20:])
		answer, _ := io.ReadAll(conn)
		conn.Close()
		if !bytes.HasPrefix(answer, []byte("HTTP/1.1 200 OK")) || !bytes.Contains(answer, []byte(`"classes": ["gg:credential-value"]`)) {
			t.Errorf("%v: the in-flight request was answered %q", sig, answer)
		}
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != exitOK {
			t.Errorf("%v: exit %d, want 0", sig, code)
		}
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

func TestServeUsage(t *testing.T) {
	for _, args := range [][]string{{"serve", "extra"}, {"serve", "--max-body", "0"}, {"serve", "--bogus"}} {
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
