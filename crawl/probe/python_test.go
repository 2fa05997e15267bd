package probe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestPythonServer interoperates with an MCP server not built on the SDK: a
// stdlib-only Python one that insists on its session id and protocol-version
// header, and whose tools must come back byte for byte, compacted.
func TestPythonServer(t *testing.T) {
	script := filepath.Join(testenv.Root(), "crawl", "testdata", "mcp_server.py")
	url, raws := testenv.PythonMCPServer(t, script), testenv.PythonMCPServerTools(t, script)
	p := probe.NewProber(probe.Options{Timeout: 20 * time.Second, AllowAddr: crawltest.Loopback})
	defer p.Close()
	r := p.Probe(context.Background(), crawltest.MustURL(t, url))
	if !r.Reachable {
		t.Fatalf("unreachable: %s: %s", r.ErrorKind, r.Error)
	}
	// The server refuses server/discover without a session (HTTP 400),
	// and answers initialize at a revision it does not speak with the
	// last of its own (2025-06-18, 2025-03-26).
	if r.Transport != probe.TransportStreamable || r.ProtocolVersion != "2025-03-26" || r.Generation != probe.GenerationSession {
		t.Errorf("transport %q version %q generation %q", r.Transport, r.ProtocolVersion, r.Generation)
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
