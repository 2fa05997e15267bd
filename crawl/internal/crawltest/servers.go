package crawltest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

var (
	stdioServerOnce sync.Once
	stdioServerBin  []byte
	stdioServerErr  error
)

// StdioServer builds crawl/testdata/stdioserver, a stdio MCP server, as a
// static binary, once, and returns its bytes.
func StdioServer(t testing.TB) []byte {
	t.Helper()
	testenv.Need(t, "go", "builds the test's static MCP server")
	stdioServerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "stdioserver-")
		if err != nil {
			stdioServerErr = err
			return
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "server")
		// -buildvcs=false: a test run by a user other than the clone's
		// owner cannot ask git for the revision (git refuses the folder).
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", bin, ".")
		cmd.Dir = filepath.Join(testenv.Root(), "crawl", "testdata", "stdioserver")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			stdioServerErr = fmt.Errorf("go build ./testdata/stdioserver: %v\n%s", err, out)
			return
		}
		stdioServerBin, stdioServerErr = os.ReadFile(bin)
	})
	if stdioServerErr != nil {
		t.Fatalf("building the static server: %v", stdioServerErr)
	}
	return stdioServerBin
}

// CountingListener listens on loopback, closes every connection it is
// offered and counts them: a packaged server that reaches it had network
// it must not have.
func CountingListener(t testing.TB) (net.Listener, *atomic.Int64) {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	connections := new(atomic.Int64)
	go func() {
		for {
			c, err := listener.Accept()
			if err != nil {
				return
			}
			connections.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { listener.Close() })
	return listener, connections
}

// CacheDir is a temporary package cache the sandbox's user can reach (a
// test run as root makes its folders 0700).
func CacheDir(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(filepath.Dir(d), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
