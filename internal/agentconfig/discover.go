package agentconfig

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Location is one place a client keeps its MCP configuration.
type Location struct {
	Client Client `json:"client"`
	Path   string `json:"path"`
	// Scope is "user" for a user-wide file, "project" for one committed
	// in a repository.
	Scope string `json:"scope"`
}

// UserLocations are the user-wide files each client's documentation names,
// under home, for goos (runtime.GOOS in use; a parameter so tests cover
// every platform). appData is %APPDATA% on Windows.
func UserLocations(home, goos, appData string) []Location {
	var desktop, code string
	switch goos {
	case "darwin":
		desktop = filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
		code = filepath.Join(home, "Library", "Application Support", "Code", "User")
	case "windows":
		desktop = filepath.Join(appData, "Claude", "claude_desktop_config.json")
		code = filepath.Join(appData, "Code", "User")
	default:
		desktop = filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
		code = filepath.Join(home, ".config", "Code", "User")
	}
	zed := filepath.Join(home, ".config", "zed", "settings.json")
	if goos == "windows" {
		zed = filepath.Join(appData, "Zed", "settings.json")
	}
	u := func(c Client, p string) Location { return Location{Client: c, Path: p, Scope: "user"} }
	return []Location{
		u(ClaudeDesktop, desktop),
		u(ClaudeCode, filepath.Join(home, ".claude.json")),
		u(Cursor, filepath.Join(home, ".cursor", "mcp.json")),
		u(VSCode, filepath.Join(code, "mcp.json")),
		u(VSCode, filepath.Join(code, "settings.json")),
		u(Windsurf, filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")),
		u(Gemini, filepath.Join(home, ".gemini", "settings.json")),
		u(Codex, filepath.Join(home, ".codex", "config.toml")),
		u(Zed, zed),
	}
}

// ProjectLocations are the files a repository at dir may commit.
func ProjectLocations(dir string) []Location {
	p := func(c Client, rel ...string) Location {
		return Location{Client: c, Path: filepath.Join(append([]string{dir}, rel...)...), Scope: "project"}
	}
	return []Location{
		p(ClaudeCode, ".mcp.json"),
		p(Cursor, ".cursor", "mcp.json"),
		p(VSCode, ".vscode", "mcp.json"),
		p(VSCode, ".vscode", "settings.json"),
		p(Gemini, ".gemini", "settings.json"),
		p(Codex, ".codex", "config.toml"),
		p(Zed, ".zed", "settings.json"),
	}
}

// Existing keeps the locations whose file exists; any other error than
// absence (a file it may not read) is returned so it is not passed over
// in silence.
func Existing(locs []Location) ([]Location, error) {
	var out []Location
	var errs []error
	for _, l := range locs {
		fi, err := os.Stat(l.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		case fi.Mode().IsRegular():
			out = append(out, l)
		}
	}
	return out, errors.Join(errs...)
}

// Discover is the existing config files of the user (home) and of the
// project at dir (empty for none).
func Discover(home, dir string) ([]Location, error) {
	var locs []Location
	if home != "" {
		locs = UserLocations(home, runtime.GOOS, os.Getenv("APPDATA"))
	}
	if dir != "" {
		locs = append(locs, ProjectLocations(dir)...)
	}
	return Existing(locs)
}

// Guess is the client whose format a file named path is in, for
// --config FILE; ok is false where the name says nothing.
func Guess(path string) (Client, bool) {
	base := filepath.Base(path)
	parent := filepath.Base(filepath.Dir(path))
	switch {
	case base == "claude_desktop_config.json":
		return ClaudeDesktop, true
	case base == ".claude.json" || base == ".mcp.json":
		return ClaudeCode, true
	case parent == ".cursor" && base == "mcp.json":
		return Cursor, true
	case parent == ".vscode" || (parent == "User" && (base == "mcp.json" || base == "settings.json")):
		return VSCode, true
	case base == "mcp_config.json":
		return Windsurf, true
	case parent == ".gemini":
		return Gemini, true
	case filepath.Ext(base) == ".toml":
		return Codex, true
	case parent == "zed" || parent == ".zed" || parent == "Zed":
		return Zed, true
	}
	return "", false
}
