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

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
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
	// A server of a revision scan does not speak says so in a JSON-RPC
	// error inside an HTTP 400; scan passes on what it said.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2099-01-01"]}}}`, msg.ID)
	}))
	t.Cleanup(refusing.Close)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"scan", dead}, exitFailure, "unreachable (connect)"},
		{[]string{"scan", refusing.URL}, exitFailure, `(the server said: -32022 "Unsupported protocol version", data {"supported":["2099-01-01"]})`},
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
	if _, stderr, code := run(t, "", "crawl", "--candidates", cands, "--out", refused); code != 0 || !strings.Contains(stderr, "rerun with --allow-private --fresh") {
		t.Fatalf("crawl: exit %d, want 0 and the refusal named\n%s", code, stderr)
	}
	if _, stderr, code := run(t, "", "run", "--data", refused, "--sha256sums", filepath.Join(refused, "SHA256SUMS"), "--out", filepath.Join(dir, "r2")); code != exitFailure {
		t.Errorf("run on a crawl without reachable servers: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := run(t, "", "crawl", "--out", release); code != exitUsage {
		t.Errorf("crawl without --candidates: exit %d\n%s", code, stderr)
	}
}

// registryOf serves a one-page MCP Registry list naming the given remotes.
func registryOf(t *testing.T, urls ...string) string {
	var servers []string
	for i, u := range urls {
		servers = append(servers, fmt.Sprintf(`{"server":{"name":"io.test/s%d","description":"d","version":"1.0.%d","remotes":[{"type":"streamable-http","url":%q}]},`+
			`"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":true}}}`, i, i, u))
	}
	body := `{"servers":[` + strings.Join(servers, ",") + `],"metadata":{"count":` + fmt.Sprint(len(urls)) + `}}`
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v0.1/servers" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestCandidatesAndCrawlFromRegistry(t *testing.T) {
	a, b := mcpServer(t, 5), mcpServer(t, 3)
	reg := registryOf(t, a, b, a)
	dir := t.TempDir()
	file := filepath.Join(dir, "c.jsonl")
	_, stderr, code := run(t, "", "candidates", "--registry", reg, "--out", file)
	if code != 0 {
		t.Fatalf("candidates: exit %d\n%s", code, stderr)
	}
	got, _ := os.ReadFile(file)
	want := fmt.Sprintf("{\"url\": %q, \"transport\": \"streamable-http\", \"registry\": %q, \"name\": \"io.test/s0\", \"version\": \"1.0.0\"}\n"+
		"{\"url\": %q, \"transport\": \"streamable-http\", \"registry\": %q, \"name\": \"io.test/s1\", \"version\": \"1.0.1\"}\n", a, reg, b, reg)
	if string(got) != want || !strings.Contains(stderr, "skipped 1: same normalised URL") {
		t.Errorf("candidates file:\n%s\nwant\n%s\nstderr: %s", got, want, stderr)
	}

	out := filepath.Join(dir, "release")
	_, stderr, code = run(t, "", "crawl", "--registry", reg, "--out", out, "--allow-private")
	if code != 0 {
		t.Fatalf("crawl --registry: exit %d\n%s", code, stderr)
	}
	rel, _ := os.ReadFile(filepath.Join(out, "release.json"))
	if !strings.Contains(string(rel), `"registry": "`+reg+`"`) || !strings.Contains(string(rel), `"tools": 8`) || !strings.Contains(string(rel), `"allow_private": true`) {
		t.Errorf("release.json:\n%s", rel)
	}
	cands, _ := os.ReadFile(filepath.Join(out, "candidates_remotes.jsonl"))
	if string(cands) != want {
		t.Errorf("the release's candidates_remotes.jsonl:\n%s", cands)
	}

	bad := filepath.Join(dir, "bad.jsonl")
	_, stderr, code = run(t, "", "candidates", "--registry", reg+"/nothing-here", "--out", bad)
	if _, err := os.Stat(bad); code != exitFailure || !strings.Contains(stderr, "HTTP 404") || err == nil {
		t.Errorf("a registry answering 404: exit %d, file %v\n%s", code, err, stderr)
	}
	for _, args := range [][]string{
		{"crawl", "--registry", reg, "--candidates", file, "--out", out},
		{"crawl", "--out", out},
		{"candidates", "--registry", reg, "--out", bad, "--updated-since", "yesterday"},
		{"crawl", "--candidates", file, "--out", out, "--max-memory", "100", "--max-bytes", "1000"},
	} {
		if _, stderr, code := run(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, stderr)
		}
	}
}

// TestCrawlSecondWriter: a crawl on a folder another process is writing
// exits 1 at once, naming that process.
func TestCrawlSecondWriter(t *testing.T) {
	out := t.TempDir()
	held, err := outset.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cands := filepath.Join(t.TempDir(), "c.txt")
	os.WriteFile(cands, []byte(mcpServer(t, 2)+"\n"), 0o644)
	_, stderr, code := run(t, "", "crawl", "--candidates", cands, "--out", out, "--allow-private")
	if code != exitFailure || !strings.Contains(stderr, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("exit %d, want 3 naming pid %d:\n%s", code, os.Getpid(), stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "crawl.journal.jsonl")); err == nil {
		t.Error("the second writer created a journal")
	}
}
