package runners

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestScanCommandSandbox runs a local stdio server through ScanCommand:
// it answers, sees its own folder read-only and the env it is given, and
// cannot reach a listener on the host's loopback even when the spec asks
// for the network.
func TestScanCommandSandbox(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of local servers; apt-get install -y bubblewrap")
	sb, err := sandbox.Find(context.Background())
	if err != nil {
		testenv.Missing(t, "no working sandbox: %v", err)
	}
	listener, connections := crawltest.CountingListener(t)
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "server")
	if err := os.WriteFile(bin, crawltest.StdioServer(t), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := sandbox.Spec{Args: []string{bin, "hello"}, Dir: dir, Network: true,
		Env:    []string{"MODE=fast", "NET_ADDR=" + listener.Addr().String()},
		Mounts: []sandbox.Mount{{Host: dir, Sandbox: dir}}}
	r := ScanCommand(context.Background(), sb, spec, probe.Options{Timeout: crawlTimeout})
	if !r.Reachable {
		t.Fatalf("unreachable: %s %s", r.ErrorKind, r.Error)
	}
	var names []string
	for _, raw := range r.Tools {
		var tool struct{ Name string }
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{"echo", "argv_hello", "mode_fast"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if slices.Contains(names, "net_ok") || connections.Load() != 0 {
		t.Errorf("the server reached the host's loopback (tools %v, %d connections)", names, connections.Load())
	}
}
