package crawl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// python3 is on every machine the project supports; without it the test
// fails rather than skips, as every CPython-backed test does.
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required for the interoperability test: ", err)
	}
	return p
}

// startPythonServer runs testdata/mcp_server.py on loopback for the test.
func startPythonServer(t *testing.T) string {
	cmd := exec.Command(python3(t), "testdata/mcp_server.py")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var port int
	if _, serr := fmt.Sscanf(line, "PORT %d", &port); err != nil || serr != nil {
		t.Fatalf("python server did not start: %q %v %v; stderr: %s", line, err, serr, stderr.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// TestPythonServer interoperates with an MCP server not built on the SDK: a
// stdlib-only Python one that insists on its session id and protocol-version
// header, and whose tools must come back byte for byte, compacted.
func TestPythonServer(t *testing.T) {
	url := startPythonServer(t)
	out, err := exec.Command(python3(t), "testdata/mcp_server.py", "--dump").Output()
	if err != nil {
		t.Fatal(err)
	}
	var raws []string
	if err := json.Unmarshal(out, &raws); err != nil {
		t.Fatal(err)
	}
	p := NewProber(ProbeOptions{Timeout: 20 * time.Second, AllowAddr: loopback})
	defer p.Close()
	r := p.Probe(context.Background(), mustURL(t, url))
	if !r.Reachable {
		t.Fatalf("unreachable: %s: %s", r.ErrorKind, r.Error)
	}
	if r.Transport != TransportStreamable || r.ProtocolVersion != RequestedVersion {
		t.Errorf("transport %q version %q", r.Transport, r.ProtocolVersion)
	}
	if want := `{"name":"python-stdlib-mcp","version":"0.1"}`; string(r.ServerInfo) != want {
		t.Errorf("serverInfo %s, want %s", r.ServerInfo, want)
	}
	if len(r.Tools) != len(raws) {
		t.Fatalf("%d tools, want %d", len(r.Tools), len(raws))
	}
	for i, raw := range raws {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(raw)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Tools[i], want.Bytes()) {
			t.Errorf("tool %d:\n got %s\nwant %s", i, r.Tools[i], want.Bytes())
		}
	}
	// What the SDK's typed Tool would have lost is all still there.
	first := string(r.Tools[0])
	for _, s := range []string{`"x-vendor":{"cost":1.50}`, `"description":"old"`, `{"name":"read_file"`} {
		if !strings.Contains(first, s) {
			t.Errorf("tool 0 lost %s: %s", s, first)
		}
	}
	if !strings.Contains(string(r.Tools[1]), `caf\u00e9`) {
		t.Errorf("tool 1 lost its escape: %s", r.Tools[1])
	}
}
