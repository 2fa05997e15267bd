package agentconfig

import (
	"reflect"
	"testing"
)

func TestTargetOf(t *testing.T) {
	tests := []struct {
		name  string
		s     Server
		want  Target
		coord string
	}{
		{"npx pinned", Server{Command: "npx", Args: []string{"-y", "server-perplexity-ask@0.1.0", "--x"}},
			Target{Kind: KindNPM, Package: "server-perplexity-ask", Version: "0.1.0", Args: []string{"--x"}}, "npm:server-perplexity-ask@0.1.0"},
		{"npx scoped unpinned", Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/d"}},
			Target{Kind: KindNPM, Package: "@modelcontextprotocol/server-filesystem", Args: []string{"/d"}}, ""},
		{"npx range", Server{Command: "npx", Args: []string{"pkg@^1.2"}}, Target{Kind: KindNPM, Package: "pkg", Spec: "^1.2", Args: []string{}}, ""},
		{"npx dist-tag", Server{Command: "npx", Args: []string{"pkg@next"}}, Target{Kind: KindNPM, Package: "pkg", Spec: "next", Args: []string{}}, ""},
		{"docker latest", Server{Command: "docker", Args: []string{"run", "-i", "ghcr.io/x/y:latest"}}, Target{Kind: KindOCI, Package: "ghcr.io/x/y", Spec: "latest", Args: []string{}}, ""},
		{"npm exec", Server{Command: "/usr/bin/npm", Args: []string{"exec", "--", "@s/x@2.0.0"}},
			Target{Kind: KindNPM, Package: "@s/x", Version: "2.0.0", Args: []string{}}, "npm:@s/x@2.0.0"},
		{"uvx", Server{Command: "uvx", Args: []string{"mcp-server-time==1.0.0", "--tz", "UTC"}},
			Target{Kind: KindPyPI, Package: "mcp-server-time", Version: "1.0.0", Args: []string{"--tz", "UTC"}}, "pypi:mcp-server-time@1.0.0"},
		{"uvx specifier", Server{Command: "uvx", Args: []string{"mcp-server-time>=1.0,<2", "--tz", "UTC"}},
			Target{Kind: KindPyPI, Package: "mcp-server-time", Spec: ">=1.0,<2", Args: []string{"--tz", "UTC"}}, ""},
		{"uvx wildcard", Server{Command: "uvx", Args: []string{"mcp-server-time==1.*"}},
			Target{Kind: KindPyPI, Package: "mcp-server-time", Spec: "==1.*", Args: []string{}}, ""},
		{"pipx run", Server{Command: "pipx", Args: []string{"run", "mcp-server-git"}},
			Target{Kind: KindPyPI, Package: "mcp-server-git", Args: []string{}}, ""},
		{"docker tag", Server{Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/example/mcp:1.2.0"}},
			Target{Kind: KindOCI, Package: "ghcr.io/example/mcp", Version: "1.2.0", Args: []string{}, Env: []string{"TOKEN"}}, "oci:ghcr.io/example/mcp:1.2.0"},
		// The GitHub MCP server's documented docker configuration.
		{"docker env options", Server{Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "--env=MODE=ro", "--env", "A=b=c", "-v", "/x:/y", "ghcr.io/github/github-mcp-server:v1.0.0", "stdio"}},
			Target{Kind: KindOCI, Package: "ghcr.io/github/github-mcp-server", Version: "v1.0.0", Args: []string{"stdio"}, Env: []string{"GITHUB_PERSONAL_ACCESS_TOKEN", "MODE=ro", "A=b=c"}}, "oci:ghcr.io/github/github-mcp-server:v1.0.0"},
		{"podman digest", Server{Command: "podman", Args: []string{"run", "-i", "localhost:5000/x@sha256:abcd", "serve"}},
			Target{Kind: KindOCI, Package: "localhost:5000/x", Version: "sha256:abcd", Args: []string{"serve"}}, "oci:localhost:5000/x@sha256:abcd"},
		{"docker registry port, no tag", Server{Command: "docker", Args: []string{"run", "localhost:5000/x"}},
			Target{Kind: KindOCI, Package: "localhost:5000/x", Args: []string{}}, ""},
		{"local", Server{Command: "node", Args: []string{"./server.js"}, File: "/r/.mcp.json"},
			Target{Kind: KindLocal, Dir: "/r", Args: []string{"./server.js"}}, ""},
		{"remote", Server{URL: "https://x/mcp"}, Target{Kind: KindRemote}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TargetOf(tc.s)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("TargetOf = %+v, want %+v", got, tc.want)
			}
			if c := got.Coordinate(); c != tc.coord {
				t.Errorf("Coordinate = %q, want %q", c, tc.coord)
			}
		})
	}
}

// TestContainerEnv: only docker's -e options reach the container; a bare
// NAME takes the docker command's value (the config's env, then the
// environment), and one set nowhere is left out.
func TestContainerEnv(t *testing.T) {
	tg := Target{Kind: KindOCI, Env: []string{"TOKEN", "MODE=ro", "HOME_ONLY", "UNSET"}}
	lookup := func(k string) (string, bool) {
		if k == "HOME_ONLY" {
			return "from-env", true
		}
		return "", false
	}
	got := tg.ContainerEnv(map[string]string{"TOKEN": "t0k", "OTHER": "not passed"}, lookup)
	want := map[string]string{"TOKEN": "t0k", "MODE": "ro", "HOME_ONLY": "from-env"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ContainerEnv = %v, want %v", got, want)
	}
}

func TestOnlyVariables(t *testing.T) {
	for v, want := range map[string]bool{"${env:X}": true, "Bearer ${TOKEN}": true, "${A}${B}": true,
		"Bearer abc": false, "abc${X}": false, "": false, "plain": false} {
		if got := OnlyVariables(v); got != want {
			t.Errorf("OnlyVariables(%q) = %v, want %v", v, got, want)
		}
	}
}
