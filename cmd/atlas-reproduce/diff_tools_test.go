package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// runCensus writes a census of the given server lines and runs it.
func runCensus(t *testing.T, lines ...string) string {
	t.Helper()
	data := t.TempDir()
	gzw := func(name, text string) {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(text))
		zw.Close()
		if err := os.WriteFile(filepath.Join(data, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gzw("server_tools.jsonl.gz", strings.Join(lines, "\n")+"\n")
	gzw("servers.jsonl.gz", `{"server_id": "a", "reachable": true}`+"\n")
	os.WriteFile(filepath.Join(data, "candidates_remotes.jsonl"), []byte(`{"url": "https://a"}`+"\n"), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	if _, stderr, code := run(t, "", "run", "--data", data, "--out", out, "--no-verify", "--progress=false"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	return out
}

func TestDiffTools(t *testing.T) {
	oldRun := runCensus(t,
		`{"server_id": "a", "tools": [{"name": "read", "inputSchema": {"properties": {"path": {}}}}, {"name": "q", "inputSchema": {"properties": {"query": {}}}}]}`,
		`{"server_id": "b", "tools": [{"name": "gone", "inputSchema": {}}]}`)
	newRun := runCensus(t,
		`{"server_id": "a", "tools": [{"inputSchema": {"properties": {"path": {}}}, "name": "read"}, {"name": "q", "inputSchema": {"properties": {"query": {}, "cmd": {"description": "shell command"}}}}]}`,
		`{"server_id": "c", "tools": [{"name": "new", "inputSchema": {"properties": {"api_key": {}}}}]}`)
	outDir := filepath.Join(t.TempDir(), "changes")

	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"json", []string{"diff", oldRun, newRun, "--json"}, 0},
		{"fail-on a gained class", []string{"diff", "--json", "--fail-on", "gg:command-string,gg:money-amount", "--out", outDir, oldRun, newRun}, exitVerdict},
		{"fail-on no gained class", []string{"diff", "--json", "--fail-on", "gg:money-amount", oldRun, newRun}, 0},
		{"fail-on needs folders", []string{"diff", "--fail-on", "gg:money-amount", filepath.Join(oldRun, "report.json"), filepath.Join(newRun, "report.json")}, exitUsage},
		{"fail-on bad class", []string{"diff", "--fail-on", "gg:nope", oldRun, newRun}, exitUsage},
		{"fail-on as proxy --deny spells it", []string{"diff", "--json", "--fail-on", "command-string", oldRun, newRun}, exitVerdict},
		{"fail-on underscores, repeated", []string{"diff", "--json", "--fail-on", "money_amount", "--fail-on", "command_string", oldRun, newRun}, exitVerdict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			if code == exitUsage {
				return
			}
			var d struct {
				Tools struct {
					Old, New                           int64
					Added, Removed, Changed, Unchanged int64
				}
				Servers       struct{ Added, Removed int64 }
				ClassesGained map[string]int64 `json:"classes_gained"`
				ClassesLost   map[string]int64 `json:"classes_lost"`
				Classes       []json.RawMessage
			}
			if err := json.Unmarshal([]byte(stdout), &d); err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			// read: keys reordered only, unchanged; q: gained cmd;
			// gone: removed; new: added.
			if d.Tools.Old != 3 || d.Tools.New != 3 || d.Tools.Added != 1 || d.Tools.Removed != 1 || d.Tools.Changed != 1 || d.Tools.Unchanged != 1 {
				t.Errorf("tools %+v", d.Tools)
			}
			if d.Servers.Added != 1 || d.Servers.Removed != 1 || len(d.Classes) != 5 {
				t.Errorf("servers %+v, %d classes", d.Servers, len(d.Classes))
			}
			if d.ClassesGained["gg:command-string"] != 1 || d.ClassesGained["gg:credential-value"] != 1 || d.ClassesLost["gg:filesystem-path"] != 0 {
				t.Errorf("gained %v lost %v", d.ClassesGained, d.ClassesLost)
			}
			if code == exitFailure && !strings.Contains(stderr, "tools gained gg:command-string (1 tools)") {
				t.Errorf("stderr: %s", stderr)
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(outDir, "changes.parquet")); err != nil || fi.Size() == 0 {
		t.Errorf("changes.parquet: %v", err)
	}
	stdout, _, code := run(t, "", "diff", oldRun, newRun)
	if code != 0 || !strings.Contains(stdout, "| Tools changed | 1 |") || !strings.Contains(stdout, "### Tools added (1)") {
		t.Errorf("markdown: exit %d\n%s", code, stdout)
	}
}

// TestDiffChecksReportAgainstTable: a report.json whose counts are not
// those of the tools.parquet beside it (edited, or of another run) fails
// the diff with exit 3 naming the folder, rather than being printed beside
// the table's figures.
func TestDiffChecksReportAgainstTable(t *testing.T) {
	oldRun := runCensus(t, `{"server_id": "a", "tools": [{"name": "read", "inputSchema": {"properties": {"path": {}}}}]}`)
	newRun := runCensus(t, `{"server_id": "a", "tools": [{"name": "read", "inputSchema": {"properties": {"path": {}, "cmd": {}}}}]}`)
	edit := func(dir string, f func(map[string]any)) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		out := t.TempDir()
		for _, name := range []string{"tools.parquet"} {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(out, name), data, 0o644)
		}
		b, _ = json.Marshal(m)
		os.WriteFile(filepath.Join(out, "report.json"), b, 0o644)
		return out
	}
	tools := edit(newRun, func(m map[string]any) { m["tools"] = 50000000 })
	class := edit(newRun, func(m map[string]any) {
		c := m["classes"].(map[string]any)["gg:command-string"].(map[string]any)
		c["tools"] = 7.0
	})
	for _, tc := range []struct{ name, new, want string }{
		{"as run", newRun, ""},
		{"tools", tools, "report.json counts 50000000 tools, but its tools.parquet holds 1"},
		{"class", class, "gg:command-string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, "", "diff", oldRun, tc.new)
			if tc.want == "" {
				if code != 0 {
					t.Fatalf("exit %d\n%s", code, stderr)
				}
				return
			}
			if code != exitFailure || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, tc.new) {
				t.Errorf("exit %d, stderr %q; want %d naming %s and saying %q", code, stderr, exitFailure, tc.new, tc.want)
			}
		})
	}
}
