package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// stdioUpstreamEnv names the upstream URL of the test binary run as a
// stdio proxy (stdioServerEnv "proxy").
const stdioUpstreamEnv = "ATLAS_PROXY_TEST_UPSTREAM"

// stdioProxy serves one stdio session in front of url, returning the exit
// status.
func stdioProxy(url string) int {
	p, err := New(Config{Upstream: Upstream{URL: url}})
	if err == nil {
		err = p.ServeStdio(context.Background(), os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// ts1Run is what ts1-sampling.mjs prints of one client.
type ts1Run struct {
	ProtocolVersion *string  `json:"protocolVersion"`
	Text            string   `json:"text"`
	Results         []string `json:"results"`
}

// TestNodeSampling: the TypeScript SDK 1.x client (revision 2025-11-25)
// reaches a Go SDK v1.8 server that speaks both generations through the
// proxy, over HTTP and over stdio (the proxy launched by the client): the
// server's sampling/createMessage reaches it, its answer reaches the
// server, and every result it receives is the one it receives directly,
// with no member of revision 2026-07-28.
func TestNodeSampling(t *testing.T) {
	testenv.NodePackages(t) // skips without them, fails with CI=true
	srv := upstreamServer(nil, nil)
	samplingTool(srv)
	up := dualUpstream(t, srv)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, Upstream{URL: up}, Policy{})
	proxied := serveHTTP(t, p) + "/mcp"
	out := testenvNodeScript(t, "ts1-sampling.mjs", testenv.NPMDir(), "sample,echo", "http", up, "http", proxied, "stdio", exe+"|"+up)
	var runs []ts1Run
	if err := json.Unmarshal(out, &runs); err != nil || len(runs) != 3 {
		t.Fatalf("ts1-sampling.mjs printed %s: %v", out, err)
	}
	if direct := runs[0]; direct.Text != "got sampled hello" || len(direct.Results) != 2 {
		t.Fatalf("directly: %+v", direct)
	}
	compareTS1(t, runs)
}

// TestNodeTS2Default: the TypeScript SDK 1.x client (2025-11-25) reaches
// the TypeScript SDK v2's default handler (2026-07-28, and the older
// revisions served statelessly) through the proxy over HTTP and stdio,
// and receives what it receives directly, with no member of 2026-07-28.
func TestNodeTS2Default(t *testing.T) {
	testenv.NodePackages(t) // skips without them, fails with CI=true
	up := testenv.NodeServer(t, "ts2-server.mjs", "stateless")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, Upstream{URL: up}, Policy{})
	proxied := serveHTTP(t, p) + "/mcp"
	out := testenvNodeScript(t, "ts1-sampling.mjs", testenv.NPMDir(), "echo,read_file", "http", up, "http", proxied, "stdio", exe+"|"+up)
	var runs []ts1Run
	if err := json.Unmarshal(out, &runs); err != nil || len(runs) != 3 {
		t.Fatalf("ts1-sampling.mjs printed %s: %v", out, err)
	}
	if direct := runs[0]; direct.Text != "echo" || len(direct.Results) != 2 {
		t.Fatalf("directly: %+v", direct)
	}
	compareTS1(t, runs)
	if n := testCounter(t, p, "atlas_proxy_sessions_translated_total", ""); n != 0 {
		t.Errorf("%v sessions translated: the server speaks the client's revision", n)
	}
}

// compareTS1 compares the runs through the proxy (HTTP, stdio) with the
// direct one (first).
func compareTS1(t *testing.T, runs []ts1Run) {
	t.Helper()
	direct := runs[0]
	for i, name := range []string{"http", "stdio"} {
		got := runs[i+1]
		t.Run(name, func(t *testing.T) {
			if got.ProtocolVersion != nil && *got.ProtocolVersion != legacyVersion {
				t.Errorf("negotiated %s", *got.ProtocolVersion)
			}
			if got.Text != direct.Text {
				t.Errorf("sample through the proxy %q, directly %q", got.Text, direct.Text)
			}
			if strings.Join(got.Results, "\n") != strings.Join(direct.Results, "\n") {
				t.Errorf("results through the proxy:\n%s\ndirectly:\n%s", strings.Join(got.Results, "\n"), strings.Join(direct.Results, "\n"))
			}
			for _, r := range got.Results {
				for _, f := range stateless2026Fields {
					if strings.Contains(r, f) {
						t.Errorf("a 2025 client got %s: %s", f, r)
					}
				}
			}
		})
	}
}

// testenvNodeScript runs a script of the package's testdata with the
// npm packages' node.
func testenvNodeScript(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.NodePackages(t), append([]string{abs}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v; stderr: %s", script, err, stderr.String())
	}
	return out
}
