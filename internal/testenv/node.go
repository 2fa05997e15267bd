package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Missing ends a test that needs a tool the machine lacks: a skip that
// says so, or a failure when CI=true, since .ci/run installs every tool.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s (.ci/run installs it)", msg)
	}
	t.Skipf("%s: the test runs where it is (CI always runs it)", msg)
}

// Node returns the path of node, or ends the test by Missing.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node is not on PATH (Debian package nodejs)")
	}
	return p
}

// NPMDir is the folder whose package.json and package-lock.json pin the
// MCP implementations of other teams the tests run: the TypeScript SDK
// 1.x and v2, and server-everything. .ci/run installs them there with
// npm ci; its testdata holds the scripts that serve and list them.
func NPMDir() string { return filepath.Join(Root(), "internal", "testenv", "npm") }

// minNode is the oldest node major version the packages of NPMDir run on
// (the TypeScript SDK v2 asks for 20).
const minNode = 20

// NodePackages returns the path of node once the packages of NPMDir are
// installed and node is recent enough for them, or ends the test by
// Missing.
func NodePackages(t testing.TB) string {
	t.Helper()
	node := Node(t)
	out, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output()
	major, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || major < minNode {
		Missing(t, "node %s is older than %d, which the npm packages need (%v)", strings.TrimSpace(string(out)), minNode, err)
	}
	if _, err := os.Stat(filepath.Join(NPMDir(), "node_modules", ".package-lock.json")); err != nil {
		Missing(t, "the npm packages are not installed (run npm ci in %s)", NPMDir())
	}
	return node
}

// NodeServer runs the script of NPMDir/testdata with args on loopback until
// the test ends (it prints "PORT n" once it listens) and returns its MCP
// endpoint URL.
func NodeServer(t testing.TB, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command(NodePackages(t), append([]string{filepath.Join(NPMDir(), "testdata", script)}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-drained
		cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	port := 0
	for port == 0 && lines.Scan() {
		fmt.Sscanf(lines.Text(), "PORT %d", &port)
	}
	// The server logs every request: its output is read to the end, so
	// that it never blocks on a full pipe.
	go func() {
		io.Copy(io.Discard, stdout)
		close(drained)
	}()
	if port == 0 {
		t.Fatalf("%s did not start: %v; stderr: %s", script, lines.Err(), stderr.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// NodeListing is what an SDK's own client lists of a server.
type NodeListing struct {
	ProtocolVersion string            `json:"protocolVersion"`
	Tools           []json.RawMessage `json:"tools"`
}

// NodeListTools lists the tools of the server at url with the SDK's own
// client, declaring the client capabilities caps (a JSON object): gen "v1"
// is the TypeScript SDK 1.x client, "v2" the v2 client negotiating
// 2026-07-28 first.
func NodeListTools(t testing.TB, gen, url string, caps json.RawMessage) NodeListing {
	t.Helper()
	cmd := exec.Command(NodePackages(t), filepath.Join(NPMDir(), "testdata", "list-tools.mjs"), gen, url, string(caps))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the %s client: %v; stderr: %s", gen, err, stderr.String())
	}
	var l NodeListing
	if err := json.Unmarshal(out, &l); err != nil {
		t.Fatalf("the %s client's listing: %v", gen, err)
	}
	return l
}
