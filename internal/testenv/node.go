package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Missing ends a test that needs something the machine lacks (a tool, a
// privilege): a skip that says so, or a failure when CI=true, since .ci/run
// installs every tool and runs as root. It is the one skip-or-fail of the
// tests; Need and Node end through it.
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
	return NodeServers(t, append([]string{script}, args...))[0]
}

// NodeServers is NodeServer for several servers, each a script and its
// arguments, started together: node takes a while to load the SDKs.
func NodeServers(t testing.TB, servers ...[]string) []string {
	t.Helper()
	node := NodePackages(t)
	ports := make([]chan int, len(servers))
	stderrs := make([]*bytes.Buffer, len(servers))
	for i, s := range servers {
		cmd := exec.Command(node, append([]string{filepath.Join(NPMDir(), "testdata", s[0])}, s[1:]...)...)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderrs[i] = &bytes.Buffer{}
		cmd.Stderr = stderrs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The first "PORT n" line says where it listens; the rest of
		// its output (it logs every request) is read to the end, so
		// that it never blocks on a full pipe.
		port := make(chan int, 1)
		ports[i] = port
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			defer close(port)
			sc := bufio.NewScanner(stdout)
			found := false
			for sc.Scan() {
				var n int
				if _, err := fmt.Sscanf(sc.Text(), "PORT %d", &n); err == nil && !found {
					found = true
					port <- n
				}
			}
		}()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-drained
			cmd.Wait()
		})
	}
	urls := make([]string, len(servers))
	for i, port := range ports {
		n, ok := <-port
		if !ok {
			t.Fatalf("%s did not start; stderr: %s", servers[i][0], stderrs[i].String())
		}
		urls[i] = fmt.Sprintf("http://127.0.0.1:%d/mcp", n)
	}
	return urls
}

// NodeListing is what an SDK's own client lists of a server.
type NodeListing struct {
	ProtocolVersion string            `json:"protocolVersion"`
	Tools           []json.RawMessage `json:"tools"`
}

// NodeClient names a server and the SDK client that lists its tools: "v1"
// is the TypeScript SDK 1.x client, "v2" the v2 client negotiating
// 2026-07-28 first.
type NodeClient struct{ Gen, URL string }

// NodeListTools lists the tools of each server with its SDK's own client,
// declaring the client capabilities caps (a JSON object), in one node
// process.
func NodeListTools(t testing.TB, caps json.RawMessage, servers ...NodeClient) []NodeListing {
	t.Helper()
	args := []string{filepath.Join(NPMDir(), "testdata", "list-tools.mjs"), string(caps)}
	for _, s := range servers {
		args = append(args, s.Gen, s.URL)
	}
	cmd := exec.Command(NodePackages(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the SDKs' clients: %v; stderr: %s", err, stderr.String())
	}
	var l []NodeListing
	if err := json.Unmarshal(out, &l); err != nil || len(l) != len(servers) {
		t.Fatalf("the SDKs' clients listed %d servers of %d: %v", len(l), len(servers), err)
	}
	return l
}

// NodeRun runs the script of NPMDir/testdata with args to its end and
// returns what it printed on stdout; the test fails if it fails.
func NodeRun(t testing.TB, script string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(NodePackages(t), append([]string{filepath.Join(NPMDir(), "testdata", script)}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v; stderr: %s", script, err, stderr.String())
	}
	return out
}
