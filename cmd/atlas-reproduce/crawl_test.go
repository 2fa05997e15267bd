package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServer serves n tools over Streamable HTTP on loopback.
func mcpServer(t *testing.T, n int) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "cmd-test", Version: "1"}, &mcp.ServerOptions{PageSize: 7})
	for i := range n {
		s.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string","description":"path to read"},"note":{"type":"string"}}}`),
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func TestScan(t *testing.T) {
	url := mcpServer(t, 20)
	stdout, stderr, code := run(t, "", "scan", url)
	if code != 0 {
		t.Fatalf("scan: exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d lines, want 20:\n%s", len(lines), stdout)
	}
	for i, l := range lines {
		var tl struct {
			Tool    string   `json:"tool"`
			Classes []string `json:"classes"`
		}
		if err := json.Unmarshal([]byte(l), &tl); err != nil {
			t.Fatal(err)
		}
		if tl.Tool != fmt.Sprintf("tool_%02d", i) || len(tl.Classes) != 1 || tl.Classes[0] != "gg:filesystem-path" {
			t.Errorf("line %d: %s", i, l)
		}
	}
	stdout, _, code = run(t, "", "scan", url, "--format", "sarif")
	if code != 0 || !strings.Contains(stdout, `"gg:filesystem-path"`) || !strings.Contains(stdout, `"version": "2.1.0"`) {
		t.Errorf("scan --format sarif: exit %d\n%.400s", code, stdout)
	}

	ts := httptest.NewServer(http.NotFoundHandler())
	dead := ts.URL
	ts.Close()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"scan", dead}, exitFailure, "unreachable (connect)"},
		{[]string{"scan", "ftp://example.org/"}, exitUsage, "only http and https"},
		{[]string{"scan"}, exitUsage, "one URL"},
		{[]string{"scan", url, url}, exitUsage, "one URL"},
		{[]string{"scan", "--timeout", "0", url}, exitUsage, "positive"},
	} {
		_, stderr, code := run(t, "", c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", c.args, code, c.code, c.msg, stderr)
		}
	}
}

// TestCrawlThenRun: the crawl's output is a release run verifies and reads.
func TestCrawlThenRun(t *testing.T) {
	dir := t.TempDir()
	cands := filepath.Join(dir, "candidates.txt")
	if err := os.WriteFile(cands, []byte(mcpServer(t, 9)+"\n"+mcpServer(t, 4)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	release := filepath.Join(dir, "release")
	if _, stderr, code := run(t, "", "crawl", "--candidates", cands, "--out", release, "--timeout", "20s", "--allow-private"); code != 0 {
		t.Fatalf("crawl: exit %d\n%s", code, stderr)
	}
	res := filepath.Join(dir, "res")
	_, stderr, code := run(t, "", "run", "--data", release, "--sha256sums", filepath.Join(release, "SHA256SUMS"), "--out", res)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(res, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Tools, Servers int
		Verified       bool
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Tools != 13 || rep.Servers != 2 || !rep.Verified {
		t.Errorf("report: %+v, want 13 tools on 2 servers, verified", rep)
	}
	// Without --allow-private, loopback servers are refused: the crawl
	// completes, with no reachable server, so run has nothing to read.
	refused := filepath.Join(dir, "refused")
	if _, stderr, code := run(t, "", "crawl", "--candidates", cands, "--out", refused); code != 0 {
		t.Fatalf("crawl: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := run(t, "", "run", "--data", refused, "--sha256sums", filepath.Join(refused, "SHA256SUMS"), "--out", filepath.Join(dir, "r2")); code != exitFailure {
		t.Errorf("run on a crawl without reachable servers: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := run(t, "", "crawl", "--out", release); code != exitUsage {
		t.Errorf("crawl without --candidates: exit %d\n%s", code, stderr)
	}
}
