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
	"sync/atomic"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/agentconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestScanConfigListsRepo lists the fixture repository's committed configs:
// every server with its file and line, secrets written in the file hidden,
// variables the environment lacks named.
func TestScanConfigListsRepo(t *testing.T) {
	repo := filepath.Join("..", "..", "internal", "agentconfig", "testdata", "repo")
	t.Setenv("GH_TOKEN", "")
	var out bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: &bytes.Buffer{}}
	if err := runScanConfig(context.Background(), env, scanConfigOptions{Repo: repo, JSON: true, List: true}); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Client, File, Name string
		Line               int
		Env                map[string]string
		Headers            map[string]string
		Needs              []string `json:"needs_configuration"`
		Target             struct{ Kind string }
	}
	got := map[string]row{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r row
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if r.Line < 1 || !strings.HasPrefix(r.File, repo) {
			t.Errorf("%s: file %q line %d", r.Name, r.File, r.Line)
		}
		got[r.Client+"/"+r.Name] = r
	}
	tests := []struct {
		key, kind string
		needs     []string
	}{
		{"claude-code/shared", "local", nil},
		{"cursor/docker-tool", "oci", nil}, // GH_TOKEN set, if empty
		{"vscode/Perplexity", "npm", []string{"input:perplexity-key"}},
		{"vscode/github", "remote", nil},
		{"vscode/time", "pypi", nil},
		{"codex/podman-tool", "oci", nil},
		{"zed/nested", "npm", nil},
	}
	for _, tc := range tests {
		r, ok := got[tc.key]
		if !ok {
			t.Errorf("%s not listed; got %v", tc.key, got)
			continue
		}
		if r.Target.Kind != tc.kind || strings.Join(r.Needs, ",") != strings.Join(tc.needs, ",") {
			t.Errorf("%s: kind %s needs %v; want %s %v", tc.key, r.Target.Kind, r.Needs, tc.kind, tc.needs)
		}
	}
	if v := got["zed/remote"].Headers["Authorization"]; v != "<redacted>" {
		t.Errorf("a header written in the file is shown as %q", v)
	}
	if v := got["vscode/Perplexity"].Env["PERPLEXITY_API_KEY"]; v != "${input:perplexity-key}" {
		t.Errorf("a variable reference is shown as %q", v)
	}
}

// TestScanConfigTable names each server's file and line on the terminal.
func TestScanConfigTable(t *testing.T) {
	file := filepath.Join("..", "..", "internal", "agentconfig", "testdata", "home", ".codex", "config.toml")
	var out bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: &bytes.Buffer{}}
	if err := runScanConfig(context.Background(), env, scanConfigOptions{Files: []string{file}, List: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{file + ":4", file + ":11", "(unpinned)", "needs env:FIGMA_OAUTH_TOKEN"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "MY_ENV_VALUE") {
		t.Errorf("table shows an env value:\n%s", out.String())
	}
}

// TestScanConfigRemoteHeaderFromEnv scans a loopback server configured in a
// project's .cursor/mcp.json whose token comes from the environment: with
// the variable set the server answers and its tools are labelled; without
// it the server is recorded as needing configuration and not asked.
func TestScanConfigRemoteHeaderFromEnv(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "cfg-test", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "run_shell", Description: "run a command", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var asked atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok-123" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"mcpServers": {` + "\n" + `"loop": {"url": "` + ts.URL + `/mcp", "headers": {"Authorization": "Bearer ${env:ATLAS_SCAN_TEST_TOKEN}"}}}}`
	if err := os.WriteFile(filepath.Join(dir, ".cursor", "mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	scan := func() map[string]any {
		var out bytes.Buffer
		env := &cmdEnv{stdout: &out, stderr: &bytes.Buffer{}}
		o := scanConfigOptions{Repo: dir, JSON: true, Probe: probe.Options{Timeout: 20 * time.Second}}
		if err := runScanConfig(context.Background(), env, o); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", out.String(), err)
		}
		if strings.Contains(out.String(), "tok-123") {
			t.Errorf("the token reached the output: %s", out.String())
		}
		return m
	}
	m := scan()
	if m["scan"] != "needs configuration" || asked.Load() != 0 {
		t.Errorf("without the token: scan %v, server asked %d times", m["scan"], asked.Load())
	}
	if m["line"] != float64(2) {
		t.Errorf("line %v, want 2", m["line"])
	}
	t.Setenv("ATLAS_SCAN_TEST_TOKEN", "tok-123")
	m = scan()
	tools, _ := m["tools"].([]any)
	if m["scan"] != "scanned: 1 tool" || len(tools) != 1 {
		t.Fatalf("with the token: %v", m)
	}
	tool := tools[0].(map[string]any)
	if tool["name"] != "run_shell" || len(tool["classes"].([]any)) == 0 {
		t.Fatalf("tool %v: want run_shell with classes", tool)
	}
	// --fail-on: the tool's own class fails the verdict with exit 1's
	// error type; a class it lacks does not.
	class := tool["classes"].([]any)[0].(string)
	for _, tc := range []struct {
		list string
		fail bool
	}{{class, true}, {"unpinned", false}} {
		f, err := parseFailOn(tc.list)
		if err != nil {
			t.Fatal(err)
		}
		env := &cmdEnv{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		o := scanConfigOptions{Repo: dir, JSON: true, FailOn: f, Probe: probe.Options{Timeout: 20 * time.Second}}
		err = runScanConfig(context.Background(), env, o)
		var v verdictError
		if got := errors.As(err, &v); got != tc.fail {
			t.Errorf("--fail-on %s: error %v, want a verdict failure %v", tc.list, err, tc.fail)
		}
	}
}

func TestParseFailOn(t *testing.T) {
	tests := []struct {
		list     string
		unpinned bool
		n        int
		usage    bool
	}{
		{"unpinned", true, 0, false},
		{"command-string, unpinned", true, 1, false},
		{"changed,unpinned", true, 0, false},
		{"no-such-class", false, 0, true},
	}
	for _, tc := range tests {
		f, err := parseFailOn(tc.list)
		var u usageError
		if errors.As(err, &u) != tc.usage || (err == nil && (f.unpinned != tc.unpinned || len(f.classes) != tc.n)) {
			t.Errorf("parseFailOn(%q) = %+v, %v", tc.list, f, err)
		}
	}
	// unpinned fails on the fixture's unpinned, enabled server.
	file := filepath.Join("..", "..", "internal", "agentconfig", "testdata", "home", ".codex", "config.toml")
	env := &cmdEnv{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	err := runScanConfig(context.Background(), env, scanConfigOptions{Files: []string{file}, List: true, FailOn: failOn{unpinned: true}})
	if err == nil || !strings.Contains(err.Error(), file+":4: context7 is unpinned") {
		t.Errorf("--fail-on unpinned: %v", err)
	}
}

// TestScrubSecrets: an error quoting a resolved URL or header value shows
// neither.
func TestScrubSecrets(t *testing.T) {
	raw := agentconfig.Server{URL: "https://x.example/mcp?key=${env:K}", Headers: map[string]string{"Authorization": "Bearer ${env:T}"}}
	full := agentconfig.Server{URL: "https://x.example/mcp?key=sekrit-1", Headers: map[string]string{"Authorization": "Bearer tok-99"}}
	got := scrubSecrets(`failed: Get "https://x.example/mcp?key=sekrit-1": 401 (sent tok-99)`, raw, full)
	if strings.Contains(got, "sekrit-1") || strings.Contains(got, "tok-99") || !strings.Contains(got, "failed: Get") {
		t.Errorf("scrubbed: %q", got)
	}
}

// TestFailOnVerdictEscapes: a tool name a server chose reaches the
// terminal in the verdict escaped, not acting.
func TestFailOnVerdictEscapes(t *testing.T) {
	s := configServer{Server: agentconfig.Server{File: ".mcp.json", Line: 3, Name: "x"},
		Tools: []scannedTool{{Name: "evil\x1b[2J", Classes: []string{"gg:command-string"}}}}
	err := failOn{classes: []string{"gg:command-string"}}.verdict([]configServer{s})
	if err == nil || strings.Contains(err.Error(), "\x1b") || !strings.Contains(err.Error(), `evil\x1b[2J`) {
		t.Errorf("verdict %q", err)
	}
}
