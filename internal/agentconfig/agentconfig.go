// Package agentconfig reads the MCP server configuration of the agent
// clients developers use (Claude Desktop, Claude Code, Cursor, VS Code,
// Windsurf, Gemini CLI, Codex, Zed), user-wide and per project, into one
// Server shape that carries the file and line each server came from, so a
// scan can point a finding at the line a developer has to change.
package agentconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/tailscale/hujson"
)

// Client names an agent client whose configuration format this package
// reads.
type Client string

// The clients read, each with the format its own documentation gives.
const (
	ClaudeDesktop Client = "claude-desktop"
	ClaudeCode    Client = "claude-code"
	Cursor        Client = "cursor"
	VSCode        Client = "vscode"
	Windsurf      Client = "windsurf"
	Gemini        Client = "gemini"
	Codex         Client = "codex"
	Zed           Client = "zed"
)

// Transport is how a client talks to a server.
type Transport string

// The transports a config can name.
const (
	Stdio Transport = "stdio"
	HTTP  Transport = "http"
	SSE   Transport = "sse"
)

// Server is one configured MCP server. Values are as written in the file:
// variables such as ${env:TOKEN} are left for Resolve, so reading a config
// never copies a secret.
type Server struct {
	Client    Client            `json:"client"`
	File      string            `json:"file"`
	Line      int               `json:"line"`
	Name      string            `json:"name"`
	Transport Transport         `json:"transport"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	// Disabled is set where the client's own config switches the server
	// off; it is listed but a scan need not start it.
	Disabled bool `json:"disabled,omitempty"`
}

// Input is a VS Code prompt variable (`inputs` in .vscode/mcp.json); its
// value is asked of the user, so a scan takes it from the environment.
type Input struct {
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	Password    bool   `json:"password,omitempty"`
}

// Config is what one file holds.
type Config struct {
	Client  Client   `json:"client"`
	File    string   `json:"file"`
	Servers []Server `json:"servers"`
	Inputs  []Input  `json:"inputs,omitempty"`
}

// ReadFile reads path as client's config.
func ReadFile(client Client, path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return Parse(client, path, data)
}

// Parse reads data, the content of file, as client's config. Errors name
// the file and line.
func Parse(client Client, file string, data []byte) (Config, error) {
	if client == Codex {
		return parseCodex(file, data)
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", file, err)
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return Config{}, fmt.Errorf("%s:%d: the top level is not an object", file, lineAt(data, root.StartOffset))
	}
	cfg := Config{Client: client, File: file}
	p := parser{client: client, file: file, data: data}
	switch client {
	case VSCode:
		// .vscode/mcp.json and the user mcp.json hold "servers" and
		// "inputs" at the top; settings.json holds them under "mcp".
		holder := obj
		if m := member(obj, "mcp"); m != nil {
			if o, ok := m.Value.(*hujson.Object); ok {
				holder = o
			}
		}
		if err := p.servers(member(holder, "servers"), &cfg); err != nil {
			return Config{}, err
		}
		if in := member(holder, "inputs"); in != nil {
			if err := p.decode(in, &cfg.Inputs); err != nil {
				return Config{}, err
			}
		}
	case Zed:
		if err := p.servers(member(obj, "context_servers"), &cfg); err != nil {
			return Config{}, err
		}
	case ClaudeCode:
		if err := p.servers(member(obj, "mcpServers"), &cfg); err != nil {
			return Config{}, err
		}
		// ~/.claude.json keeps local-scope servers per project path.
		if pr := member(obj, "projects"); pr != nil {
			if po, ok := pr.Value.(*hujson.Object); ok {
				for i := range po.Members {
					if o, ok := po.Members[i].Value.Value.(*hujson.Object); ok {
						if err := p.servers(member(o, "mcpServers"), &cfg); err != nil {
							return Config{}, err
						}
					}
				}
			}
		}
	default:
		if err := p.servers(member(obj, "mcpServers"), &cfg); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

type parser struct {
	client Client
	file   string
	data   []byte
}

// member is the value of obj's member named name, or nil.
func member(obj *hujson.Object, name string) *hujson.Value {
	if obj == nil {
		return nil
	}
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			return &obj.Members[i].Value
		}
	}
	return nil
}

// decode reads v, comments and trailing commas dropped, into out.
func (p parser) decode(v *hujson.Value, out any) error {
	c := v.Clone()
	c.Standardize()
	if err := json.Unmarshal(c.Pack(), out); err != nil {
		return fmt.Errorf("%s:%d: %w", p.file, lineAt(p.data, v.StartOffset), err)
	}
	return nil
}

// rawServer is the union of the clients' JSON server entries.
type rawServer struct {
	Type      string            `json:"type"`
	Transport string            `json:"transport"`
	Command   json.RawMessage   `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	ServerURL string            `json:"serverUrl"` // Windsurf
	HTTPURL   string            `json:"httpUrl"`   // Gemini CLI
	Headers   map[string]string `json:"headers"`
	Disabled  bool              `json:"disabled"`
	Enabled   *bool             `json:"enabled"` // Zed
}

// zedCommand is Zed's older nested form: "command": {"path", "args", "env"}.
type zedCommand struct {
	Path string            `json:"path"`
	Args []string          `json:"args"`
	Env  map[string]string `json:"env"`
}

func (p parser) servers(v *hujson.Value, cfg *Config) error {
	if v == nil {
		return nil
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return fmt.Errorf("%s:%d: the servers are not an object", p.file, lineAt(p.data, v.StartOffset))
	}
	for i := range obj.Members {
		m := &obj.Members[i]
		name := m.Name.Value.(hujson.Literal).String()
		var r rawServer
		if err := p.decode(&m.Value, &r); err != nil {
			return err
		}
		s := Server{
			Client: p.client, File: p.file, Line: lineAt(p.data, m.Name.StartOffset), Name: name,
			Args: r.Args, Env: r.Env, Cwd: r.Cwd, Headers: r.Headers, Disabled: r.Disabled,
		}
		if r.Enabled != nil && !*r.Enabled {
			s.Disabled = true
		}
		if len(r.Command) > 0 && !bytes.Equal(r.Command, []byte("null")) {
			if err := json.Unmarshal(r.Command, &s.Command); err != nil {
				var zc zedCommand
				if err := json.Unmarshal(r.Command, &zc); err != nil {
					return fmt.Errorf("%s:%d: server %q: command is neither a string nor {path, args, env}", p.file, s.Line, name)
				}
				s.Command, s.Args, s.Env = zc.Path, zc.Args, zc.Env
			}
		}
		s.URL = firstNonEmpty(r.URL, r.ServerURL, r.HTTPURL)
		s.Transport = transport(firstNonEmpty(r.Type, r.Transport), s, r.HTTPURL != "")
		if s.Command == "" && s.URL == "" {
			return fmt.Errorf("%s:%d: server %q has neither a command nor a url", p.file, s.Line, name)
		}
		cfg.Servers = append(cfg.Servers, s)
	}
	return nil
}

// transport reads the declared type; undeclared, a command means stdio and
// a URL means Streamable HTTP, except where the client's docs say a plain
// url is SSE (Gemini CLI's "url", as against its "httpUrl").
func transport(declared string, s Server, httpURL bool) Transport {
	switch strings.ToLower(declared) {
	case "stdio":
		return Stdio
	case "sse":
		return SSE
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		return HTTP
	}
	if s.Command != "" {
		return Stdio
	}
	if s.Client == Gemini && !httpURL {
		return SSE
	}
	return HTTP
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// sortedKeys is m's keys in order, for output that does not depend on map order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortStrings(s []string) { slices.Sort(s) }
