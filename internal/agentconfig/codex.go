package agentconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// codexServer is one [mcp_servers.NAME] table of ~/.codex/config.toml.
type codexServer struct {
	Command     string            `toml:"command"`
	Args        []string          `toml:"args"`
	Env         map[string]string `toml:"env"`
	Cwd         string            `toml:"cwd"`
	URL         string            `toml:"url"`
	HTTPHeaders map[string]string `toml:"http_headers"`
	// EnvHTTPHeaders maps a header to the environment variable holding it.
	EnvHTTPHeaders    map[string]string `toml:"env_http_headers"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
	Enabled           *bool             `toml:"enabled"`
}

// codexHeader matches a table header [mcp_servers.NAME] (NAME bare or
// quoted), the line a server's definition starts on.
var codexHeader = regexp.MustCompile(`^\s*\[\s*mcp_servers\s*\.\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*\]`)

func parseCodex(file string, data []byte) (Config, error) {
	var doc struct {
		MCPServers map[string]codexServer `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return Config{}, fmt.Errorf("%s: %w", file, err)
	}
	lines := codexLines(data)
	names := make([]string, 0, len(doc.MCPServers))
	for n := range doc.MCPServers {
		names = append(names, n)
	}
	// Order as in the file, as the JSON readers do.
	sort.Slice(names, func(i, j int) bool {
		if lines[names[i]] != lines[names[j]] {
			return lines[names[i]] < lines[names[j]]
		}
		return names[i] < names[j]
	})
	cfg := Config{Client: Codex, File: file}
	for _, n := range names {
		c := doc.MCPServers[n]
		s := Server{Client: Codex, File: file, Line: lines[n], Name: n, Command: c.Command, Args: c.Args,
			Env: c.Env, Cwd: c.Cwd, URL: c.URL, Headers: c.HTTPHeaders}
		if s.Line == 0 {
			// An inline table (mcp_servers = { x = {...} }): the
			// mcp_servers line is the nearest a reader can point to.
			s.Line = lines[""]
		}
		for h, v := range c.EnvHTTPHeaders {
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers[h] = "${env:" + v + "}"
		}
		if c.BearerTokenEnvVar != "" {
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers["Authorization"] = "Bearer ${env:" + c.BearerTokenEnvVar + "}"
		}
		if c.Enabled != nil && !*c.Enabled {
			s.Disabled = true
		}
		switch {
		case s.Command != "":
			s.Transport = Stdio
		case s.URL != "":
			s.Transport = HTTP
		default:
			return Config{}, fmt.Errorf("%s:%d: server %q has neither a command nor a url", file, s.Line, n)
		}
		cfg.Servers = append(cfg.Servers, s)
	}
	return cfg, nil
}

// codexLines maps each server name to the line of its table header; ""
// holds the first line that mentions mcp_servers at all.
func codexLines(data []byte) map[string]int {
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if _, seen := out[""]; !seen && strings.Contains(line, "mcp_servers") {
			out[""] = n
		}
		m := codexHeader.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[1]
		switch {
		case strings.HasPrefix(name, `"`):
			var s string
			if _, err := toml.Decode("k = "+name, &struct {
				K *string `toml:"k"`
			}{&s}); err == nil {
				name = s
			}
		case strings.HasPrefix(name, "'"):
			name = strings.Trim(name, "'")
		}
		if _, seen := out[name]; !seen {
			out[name] = n
		}
	}
	return out
}
