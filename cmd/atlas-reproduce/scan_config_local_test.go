package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/agentconfig"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
)

// TestScanConfigLocalCommand runs a repository's own `node ./server.js`
// from its .mcp.json in the sandbox: the server answers and its tool is
// labelled, the config's env reaches it, and what it could see says the
// sandbox showed its folder read-only and not a file beside it on the
// host. With --no-local it is listed and not run.
func TestScanConfigLocalCommand(t *testing.T) {
	npmtest.NeedSandbox(t)
	base := t.TempDir()
	repo, other := filepath.Join(base, "repo"), filepath.Join(base, "other")
	for _, d := range []string{repo, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The sandbox may run as another user than the test (root drops to
	// an unprivileged one): the folders are open to it, as a user's
	// checkout is.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(other, "secret.txt")
	if err := os.WriteFile(secret, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join("testdata", "localserver", "server.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "server.js"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "{\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"node\", \"args\": [\"./server.js\"], \"env\": {\"SECRET_FILE\": \"" + secret + "\"}}\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(repo, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	scan := func(noLocal bool) map[string]any {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdout: &out, stderr: &errb}
		o := scanConfigOptions{Repo: repo, JSON: true, NoLocal: noLocal, Probe: probe.Options{Timeout: 60 * time.Second}}
		if err := runScanConfig(context.Background(), env, o); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		return m
	}
	m := scan(true)
	if m["scan"] != "skipped (--no-local)" || m["tools"] != nil {
		t.Errorf("--no-local: %v", m)
	}
	m = scan(false)
	tools, _ := m["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("scan %v: want the server's one tool", m["scan"])
	}
	tool := tools[0].(map[string]any)
	if tool["name"] != "outside_false_writable_false_env_true" {
		t.Errorf("the server saw %q: want the env of the config, and neither the file outside its folder nor a writable folder", tool["name"])
	}
	if cs, _ := tool["classes"].([]any); len(cs) == 0 || !strings.Contains(cs[0].(string), "command-string") {
		t.Errorf("classes %v, want gg:command-string", tool["classes"])
	}
	if _, err := os.Stat(filepath.Join(repo, "written-by-server.txt")); err == nil {
		t.Error("the server wrote into the repository")
	}
}

// TestLocalSpec: what the sandbox of a local command shows. A project's
// command sees the repository; a user-wide config's command sees the
// folder of the script it names, never the config's own folder (which
// holds other servers' secrets), and a program outside /usr alone.
func TestLocalSpec(t *testing.T) {
	base := t.TempDir()
	repo, home, srv := filepath.Join(base, "repo"), filepath.Join(base, "home"), filepath.Join(base, "servers", "x")
	for _, d := range []string{repo, filepath.Join(home, ".cursor"), srv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(srv, "index.js")
	bin := filepath.Join(srv, "server")
	for _, f := range []string{script, bin} {
		if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH to stand for a system program")
	}
	userCfg := filepath.Join(home, ".cursor", "mcp.json")
	tests := []struct {
		name   string
		s      agentconfig.Server
		dir    string
		mounts []string
	}{
		{"project", agentconfig.Server{File: filepath.Join(repo, ".mcp.json"), Command: sh, Args: []string{"./run.sh"}}, repo, []string{repo}},
		{"user-wide script", agentconfig.Server{File: userCfg, Command: sh, Args: []string{script}}, srv, []string{srv}},
		{"user-wide binary", agentconfig.Server{File: userCfg, Command: bin}, srv, []string{srv}},
		{"user-wide, nothing named", agentconfig.Server{File: userCfg, Command: sh, Args: []string{"-c", "true"}}, "", nil},
		{"cwd", agentconfig.Server{File: userCfg, Command: bin, Cwd: repo}, repo, []string{repo, bin}},
	}
	// A project config in the home folder (scan --config run from home)
	// does not show the home folder.
	homeProject, err := (&localRunner{Repo: home, Home: home}).spec(agentconfig.Server{File: filepath.Join(home, ".mcp.json"), Command: sh, Args: []string{"-c", "true"}})
	if err != nil || len(homeProject.Mounts) != 0 {
		t.Errorf("a project config in the home folder: mounts %+v (%v), want none", homeProject.Mounts, err)
	}
	l := &localRunner{Repo: repo, Home: home}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := l.spec(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			var mounts []string
			for _, m := range spec.Mounts {
				if m.Writable || m.Host != m.Sandbox {
					t.Errorf("mount %+v: want read-only at its own path", m)
				}
				mounts = append(mounts, m.Host)
			}
			if spec.Dir != tc.dir || !slices.Equal(mounts, tc.mounts) || spec.Network {
				t.Errorf("dir %q mounts %v network %v; want %q %v and no network", spec.Dir, mounts, spec.Network, tc.dir, tc.mounts)
			}
		})
	}
}
