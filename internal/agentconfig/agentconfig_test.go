package agentconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// lineOf is the 1-based line of the first line of file that contains
// needle: the fixture's own text says where a server starts, so the
// expected line is not written by hand.
func lineOf(t *testing.T, file, needle string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, needle) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line with %q", file, needle)
	return 0
}

func TestParseEveryClient(t *testing.T) {
	type want struct {
		name, needle string
		transport    Transport
		command, url string
		args         []string
		disabled     bool
	}
	tests := []struct {
		client Client
		file   string
		want   []want
	}{
		{ClaudeDesktop, "home/.config/Claude/claude_desktop_config.json", []want{
			{"filesystem", `"filesystem":`, Stdio, "npx", "", []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"}, false}}},
		{ClaudeCode, "home/.claude.json", []want{
			{"remote-api", `"remote-api":`, HTTP, "", "https://api.example.com/mcp", nil, false},
			{"local-py", `"local-py":`, Stdio, "uvx", "", []string{"mcp-server-fetch"}, false}}},
		{ClaudeCode, "repo/.mcp.json", []want{
			{"shared", `"shared":`, Stdio, "node", "", []string{"./tools/server.js"}, false}}},
		{Cursor, "home/.cursor/mcp.json", []want{
			{"sse-server", `"sse-server":`, HTTP, "", "http://localhost:3000/sse", nil, false}}},
		{Cursor, "repo/.cursor/mcp.json", []want{
			{"docker-tool", `"docker-tool":`, Stdio, "docker", "", []string{"run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/example/mcp:1.2.0"}, false}}},
		{VSCode, "repo/.vscode/mcp.json", []want{
			{"Perplexity", `"Perplexity":`, Stdio, "npx", "", []string{"-y", "server-perplexity-ask@0.1.0"}, false},
			{"github", `"github":`, HTTP, "", "https://api.githubcopilot.com/mcp/", nil, false}}},
		{VSCode, "repo/.vscode/settings.json", []want{
			{"time", `"time":`, Stdio, "uvx", "", []string{"mcp-server-time"}, false}}},
		{Windsurf, "home/.codeium/windsurf/mcp_config.json", []want{
			{"remote", `"remote":`, HTTP, "", "https://mcp.example.com/mcp", nil, false},
			{"git", `"git":`, Stdio, "uvx", "", []string{"mcp-server-git"}, true}}},
		{Gemini, "home/.gemini/settings.json", []want{
			{"events", `"events":`, SSE, "", "http://localhost:8080/sse", nil, false},
			{"stream", `"stream":`, HTTP, "", "http://localhost:8080/mcp", nil, false}}},
		{Codex, "home/.codex/config.toml", []want{
			{"context7", `[mcp_servers.context7]`, Stdio, "npx", "", []string{"-y", "@upstash/context7-mcp"}, false},
			{"figma remote", `[mcp_servers."figma remote"]`, HTTP, "", "https://mcp.figma.com/mcp", nil, false}}},
		{Codex, "repo/.codex/config.toml", []want{
			{"podman-tool", `[mcp_servers.podman-tool]`, Stdio, "podman", "", []string{"run", "-i", "--rm", "quay.io/example/mcp"}, true}}},
		{Zed, "home/.config/zed/settings.json", []want{
			{"local-server", `"local-server":`, Stdio, "some-command", "", []string{"arg-1"}, false},
			{"nested", `"nested":`, Stdio, "npx", "", []string{"-y", "mcp-nested@2.0.0"}, false},
			{"remote", `"remote":`, HTTP, "", "https://mcp.example.org/mcp", nil, false}}},
	}
	for _, tc := range tests {
		t.Run(string(tc.client)+"/"+tc.file, func(t *testing.T) {
			file := filepath.Join("testdata", tc.file)
			if g, ok := Guess(file); !ok || g != tc.client {
				t.Errorf("Guess(%s) = %q, %v; want %q", file, g, ok, tc.client)
			}
			cfg, err := ReadFile(tc.client, file)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Servers) != len(tc.want) {
				t.Fatalf("%d servers, want %d: %+v", len(cfg.Servers), len(tc.want), cfg.Servers)
			}
			for i, w := range tc.want {
				s := cfg.Servers[i]
				if s.Name != w.name || s.Transport != w.transport || s.Command != w.command || s.URL != w.url ||
					!reflect.DeepEqual(s.Args, w.args) || s.Disabled != w.disabled || s.Client != tc.client || s.File != file {
					t.Errorf("server %d = %+v; want %+v", i, s, w)
				}
				if wl := lineOf(t, file, w.needle); s.Line != wl {
					t.Errorf("%s: line %d, want %d", s.Name, s.Line, wl)
				}
			}
		})
	}
}

func TestParseExtras(t *testing.T) {
	cfg, err := ReadFile(VSCode, "testdata/repo/.vscode/mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Input{{ID: "perplexity-key", Description: "Perplexity API Key", Password: true}}; !reflect.DeepEqual(cfg.Inputs, want) {
		t.Errorf("inputs %+v, want %+v", cfg.Inputs, want)
	}
	cfg, err = ReadFile(Codex, "testdata/home/.codex/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	figma := cfg.Servers[1]
	if want := map[string]string{"X-Figma-Region": "us-east-1", "Authorization": "Bearer ${env:FIGMA_OAUTH_TOKEN}"}; !reflect.DeepEqual(figma.Headers, want) {
		t.Errorf("codex headers %v, want %v", figma.Headers, want)
	}
	if want := map[string]string{"MY_ENV_VAR": "MY_ENV_VALUE"}; !reflect.DeepEqual(cfg.Servers[0].Env, want) {
		t.Errorf("codex env %v, want %v", cfg.Servers[0].Env, want)
	}
	cfg, err = ReadFile(Zed, "testdata/home/.config/zed/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"A": "b"}; !reflect.DeepEqual(cfg.Servers[1].Env, want) {
		t.Errorf("zed nested env %v, want %v", cfg.Servers[1].Env, want)
	}
}

func TestParseErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name   string
		client Client
		data   string
		want   string
	}{
		{"no command nor url", Cursor, "{\n\"mcpServers\": {\n  \"x\": {\"args\": []}\n}}", "f.json:3: server \"x\" has neither"},
		{"servers not an object", ClaudeDesktop, "{\n\"mcpServers\": []}", "f.json:2:"},
		{"bad json", Cursor, "{\n\"mcpServers\": {,}}", "f.json"},
		{"bad command", Zed, "{\"context_servers\": {\n\"z\": {\"command\": 3}}}", "f.json:2:"},
		{"bad toml", Codex, "[mcp_servers.x\n", "f.json"},
		{"toml no command", Codex, "\n[mcp_servers.y]\nargs = []\n", "f.json:2: server \"y\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.client, "f.json", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	env := map[string]string{"API_TOKEN": "sekrit", "PERPLEXITY_KEY": "pk"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		name    string
		in      Server
		want    Server
		missing []string
	}{
		{"env in header", Server{URL: "https://x/${env:HOST}", Headers: map[string]string{"Authorization": "Bearer ${API_TOKEN}"}},
			Server{URL: "https://x/", Args: []string{}, Headers: map[string]string{"Authorization": "Bearer sekrit"}}, []string{"env:HOST"}},
		{"input from upper-snake env", Server{Command: "npx", Env: map[string]string{"K": "${input:perplexity-key}"}},
			Server{Command: "npx", Args: []string{}, Env: map[string]string{"K": "pk"}}, nil},
		{"gemini bare $VAR", Server{Client: Gemini, Headers: map[string]string{"A": "Bearer $API_TOKEN", "B": "$NOPE2"}},
			Server{Client: Gemini, Args: []string{}, Headers: map[string]string{"A": "Bearer sekrit", "B": ""}}, []string{"NOPE2"}},
		{"bare $VAR kept elsewhere", Server{Client: Cursor, Args: []string{"$API_TOKEN"}},
			Server{Client: Cursor, Args: []string{"$API_TOKEN"}}, nil},
		{"default used, missing once", Server{Args: []string{"${LEVEL:-info}", "${NOPE}", "${NOPE}"}},
			Server{Args: []string{"info", "", ""}}, []string{"NOPE"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, missing := Resolve(tc.in, lookup)
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(missing, tc.missing) {
				t.Errorf("Resolve = %+v, %v; want %+v, %v", got, missing, tc.want, tc.missing)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	home, err := filepath.Abs("testdata/home")
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := filepath.Abs("testdata/repo")
	locs, err := Existing(append(UserLocations(home, "linux", ""), ProjectLocations(repo)...))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range locs {
		rel, _ := filepath.Rel(filepath.Dir(home), l.Path)
		got = append(got, string(l.Client)+" "+l.Scope+" "+filepath.ToSlash(rel))
	}
	// Every fixture file is found, each under its own client.
	var files []string
	for _, root := range []string{home, repo} {
		_ = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(locs) != len(files) {
		t.Errorf("found %d of %d fixture files: %v", len(locs), len(files), got)
	}
	for _, l := range locs {
		if g, _ := Guess(l.Path); g != l.Client {
			t.Errorf("%s found as %s, guessed as %s", l.Path, l.Client, g)
		}
	}
}
