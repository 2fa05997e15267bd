package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanConfigListsRepo lists the fixture repository's committed configs:
// every server with its file and line, secrets written in the file hidden,
// variables the environment lacks named.
func TestScanConfigListsRepo(t *testing.T) {
	repo := filepath.Join("..", "..", "internal", "agentconfig", "testdata", "repo")
	t.Setenv("GH_TOKEN", "")
	var out bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: &bytes.Buffer{}}
	if err := runScanConfig(context.Background(), env, scanConfigOptions{Repo: repo, JSON: true}); err != nil {
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
	if err := runScanConfig(context.Background(), env, scanConfigOptions{Files: []string{file}}); err != nil {
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
