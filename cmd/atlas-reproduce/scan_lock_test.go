package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestScanLock pins a loopback server's tools, then changes them: one tool
// gains a cmd property, one vanishes, one appears.
func TestScanLock(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "lock-test", Version: "1"}, nil)
	add := func(name, schema string) {
		s.AddTool(&mcp.Tool{Name: name, Description: name + " things", InputSchema: json.RawMessage(schema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	add("read", `{"type":"object","properties":{"file_path":{"type":"string"}}}`)
	add("run", `{"type":"object","properties":{"query":{"type":"string"}}}`)
	add("gone", `{"type":"object"}`)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	lock := filepath.Join(t.TempDir(), "tools.lock.json")

	for _, step := range []struct {
		name       string
		change     func()
		code       int
		wantStderr []string
	}{
		{"first run pins", func() {}, 0, []string{"pinned 3 tools in " + lock}},
		{"same tools match", func() {}, 0, []string{"the 3 tools match"}},
		{"changed tools fail", func() {
			add("run", `{"type":"object","properties":{"query":{"type":"string"},"cmd":{"type":"string","description":"shell command"}}}`)
			s.RemoveTools("gone")
			add("fresh", `{"type":"object","properties":{"api_key":{"type":"string"}}}`)
		}, exitVerdict, []string{
			`changed  "run" definition`, "gained gg:command-string",
			`added    "fresh"`, "gained gg:credential-value",
			`removed  "gone"`,
			"3 tools changed, appeared or vanished since " + lock,
		}},
	} {
		t.Run(step.name, func(t *testing.T) {
			before, _ := os.ReadFile(lock)
			step.change()
			_, stderr, code := run(t, "", "scan", url, "--lock", lock)
			if code != step.code {
				t.Fatalf("exit %d, want %d\n%s", code, step.code, stderr)
			}
			for _, w := range step.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			after, err := os.ReadFile(lock)
			if err != nil {
				t.Fatal(err)
			}
			if before != nil && !bytes.Equal(before, after) {
				t.Errorf("the lock file changed:\n%s", after)
			}
			var pinned struct {
				Tools []struct {
					Name       string `json:"name"`
					Definition string `json:"definition_sha256"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(after, &pinned); err != nil || len(pinned.Tools) != 3 || len(pinned.Tools[0].Definition) != 64 {
				t.Errorf("lock file: %v\n%s", err, after)
			}
		})
	}
	ents, _ := os.ReadDir(filepath.Dir(lock))
	if len(ents) != 1 {
		t.Errorf("files beside the lock: %v", ents)
	}
}

// TestScanLockCheckedFirst: a lock that can be neither written (its folder
// is missing) nor read (a FIFO, which would block open(2), or trailing
// bytes) fails before the server is asked, naming the lock path, not a
// temporary file.
func TestScanLockCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.lock.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.lock.json")
	if err := os.WriteFile(garbage, []byte(`{"version": 1, "server_id": "s", "tools": []} trailing`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Nothing listens on this address: a scan would say unreachable.
	url := "http://127.0.0.1:1/mcp"
	for _, tc := range []struct{ name, lock, want string }{
		{"missing folder", filepath.Join(dir, "no", "such", "tools.lock.json"), "does not exist"},
		{"fifo", fifo, "not a regular file (a named pipe)"},
		{"trailing bytes", garbage, "more after the JSON document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, "", "scan", url, "--lock", tc.lock)
			if code != exitFailure || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, tc.lock) || strings.Contains(stderr, "unreachable") {
				t.Errorf("exit %d, stderr %q; want %d, naming %s and saying %q before any scan", code, stderr, exitFailure, tc.lock, tc.want)
			}
		})
	}
}
