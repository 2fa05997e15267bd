package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// loopbackConfig serves s on loopback and writes a repository whose
// .cursor/mcp.json configures it; it returns the repository.
func loopbackConfig(t *testing.T, s *mcp.Server) string {
	t.Helper()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "{\n  \"mcpServers\": {\n    \"loop\": {\"url\": \"" + ts.URL + "/mcp\"}\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, ".cursor", "mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func addTool(s *mcp.Server, name, desc, schema string) {
	s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
}

// TestScanConfigLockRoundTrip pins a configured loopback server's tools,
// then renames one (same definition, new name), changes another's input
// schema alone and adds a third: the scan names each change, --fail-on
// changed fails the verdict and leaves the lock as it was, --approve
// accepts each change by name and rewrites the lock, and the next scan
// finds nothing.
func TestScanConfigLockRoundTrip(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "lock-cfg", Version: "1"}, nil)
	addTool(s, "read_file", "read a file", `{"type":"object","properties":{"path":{"type":"string"}}}`)
	addTool(s, "search", "search the docs", `{"type":"object","properties":{"query":{"type":"string"}}}`)
	repo := loopbackConfig(t, s)
	lock := filepath.Join(t.TempDir(), "mcp.lock.json")
	fail, err := parseFailOn("changed")
	if err != nil {
		t.Fatal(err)
	}
	scan := func(approve bool) (stdout, stderr string, err error) {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdout: &out, stderr: &errb}
		o := scanConfigOptions{Repo: repo, JSON: true, Lock: lock, Approve: approve, FailOn: fail,
			Probe: probe.Options{Timeout: 20 * time.Second}}
		err = runScanConfig(context.Background(), env, o)
		return out.String(), errb.String(), err
	}

	_, stderr, err := scan(false)
	if err != nil || !strings.Contains(stderr, "pinned 2 tools of 1 servers in "+lock) {
		t.Fatalf("first scan: %v\n%s", err, stderr)
	}
	pinned, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pinned), `".cursor/mcp.json#loop"`) {
		t.Errorf("the lock names the server otherwise than by its file and name:\n%s", pinned)
	}

	s.RemoveTools("read_file", "search")
	addTool(s, "open_file", "read a file", `{"type":"object","properties":{"path":{"type":"string"}}}`)
	addTool(s, "search", "search the docs", `{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}}}`)
	addTool(s, "fresh", "store an api key", `{"type":"object","properties":{"api_key":{"type":"string"}}}`)
	stdout, stderr, err := scan(false)
	var v verdictError
	if !errors.As(err, &v) {
		t.Fatalf("changed tools: error %v, want a verdict failure\n%s", err, stderr)
	}
	for _, w := range []string{
		`changed  "search" definition`, "(input schema changed)",
		`renamed  "read_file" -> "open_file"`,
		`added    "fresh"`, "gained gg:credential-value",
	} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, "removed") {
		t.Errorf("a renamed tool is also reported removed:\n%s", stderr)
	}
	for _, w := range []string{`"search" changed`, `"open_file" renamed`, `"fresh" added`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("verdict lacks %q: %v", w, err)
		}
	}
	var row struct {
		Changes []struct {
			Change        string `json:"change"`
			SchemaChanged bool   `json:"schema_changed"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(stdout), &row); err != nil || len(row.Changes) != 3 || row.Changes[0].Change != "changed" || !row.Changes[0].SchemaChanged {
		t.Errorf("--json changes %+v (%v):\n%s", row.Changes, err, stdout)
	}
	if now, _ := os.ReadFile(lock); !bytes.Equal(now, pinned) {
		t.Errorf("an unapproved scan rewrote the lock:\n%s", now)
	}

	_, stderr, err = scan(true)
	if err != nil {
		t.Fatalf("--approve: %v\n%s", err, stderr)
	}
	for _, w := range []string{`approved renamed  "read_file" -> "open_file"`, `approved changed  "search"`, `approved added    "fresh"`, "approved 3 changes"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("--approve stderr lacks %q:\n%s", w, stderr)
		}
	}
	_, stderr, err = scan(false)
	if err != nil || strings.Contains(stderr, "changed") {
		t.Errorf("after --approve: %v\n%s", err, stderr)
	}
	ents, _ := os.ReadDir(filepath.Dir(lock))
	if len(ents) != 1 {
		t.Errorf("files beside the lock: %v", ents)
	}
}
