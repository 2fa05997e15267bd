package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// binary is the atlas-reproduce built once for the tests that run it as a
// user would: real flags, real exit statuses, real signals.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "atlas-reproduce-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "atlas-reproduce")
	if out, err := exec.Command("go", "build", "-buildvcs=auto", "-o", binary, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("building the binary: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs the binary and returns stdout, stderr and the exit status.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	}
	t.Fatalf("running %v: %v", args, err)
	return "", "", -1
}

// TestVersion checks that the binary reports the revision its build info
// records, as `go version -m` reads it. The go command stamps a build made
// in a git clone, but not one in a git worktree or outside a checkout: the
// binary then says "(devel)" with no revision.
func TestVersion(t *testing.T) {
	meta, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	want := "(devel)"
	for _, line := range strings.Split(string(meta), "\n") {
		if rev, ok := strings.CutPrefix(strings.TrimSpace(line), "build\tvcs.revision="); ok {
			want = rev
		}
	}
	if fi, err := os.Stat(filepath.Join("..", "..", ".git")); err == nil && fi.IsDir() && want == "(devel)" {
		t.Errorf("built in a git clone, but the build info records no revision:\n%s", meta)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, stderr, code := run(t, "", args...)
		if code != 0 || !strings.HasPrefix(stdout, "atlas-reproduce ") || !strings.Contains(stdout, want) {
			t.Errorf("%v: exit %d, stdout %q (want it to name %s), stderr %q", args, code, stdout, want, stderr)
		}
	}
	if _, _, code := run(t, "", "version", "extra"); code != exitUsage {
		t.Errorf("version extra: exit %d, want %d", code, exitUsage)
	}
}

func TestHelpOnEverySubcommand(t *testing.T) {
	if len(commands) < 6 {
		t.Fatalf("only %d subcommands registered", len(commands))
	}
	for name := range commands {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			stdout, stderr, code := run(t, "", args...)
			if code != 0 || !strings.HasPrefix(stdout, "usage: atlas-reproduce "+name) || stderr != "" {
				t.Errorf("%v: exit %d, stdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
			}
		}
	}
	for _, args := range [][]string{{"--help"}, {"help"}} {
		stdout, _, code := run(t, "", args...)
		if code != 0 || !strings.Contains(stdout, "commands:") {
			t.Errorf("%v: exit %d\n%s", args, code, stdout)
		}
	}
	if _, stderr, code := run(t, "", "help", "frobnicate"); code != exitUsage || !strings.Contains(stderr, "unknown command") {
		t.Errorf("help frobnicate: exit %d\n%s", code, stderr)
	}
	if stdout, stderr, code := run(t, "", "run", "--bogus"); code != exitUsage || stdout != "" ||
		!strings.Contains(stderr, "-bogus") || !strings.Contains(stderr, "usage: atlas-reproduce run") {
		t.Errorf("run --bogus: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if _, _, code := run(t, ""); code != exitUsage {
		t.Errorf("no arguments: exit %d, want %d", code, exitUsage)
	}
	if _, stderr, code := run(t, "", "frobnicate"); code != exitUsage || !strings.Contains(stderr, "unknown command") {
		t.Errorf("unknown command: exit %d\n%s", code, stderr)
	}
	if _, _, code := run(t, "", "run", "--bogus"); code != exitUsage {
		t.Errorf("bad flag: exit %d, want %d", code, exitUsage)
	}
	if _, _, code := run(t, "", "run"); code != exitUsage {
		t.Errorf("run without --data: exit %d, want %d", code, exitUsage)
	}
}

// TestClassifyBrokenLine: the tools before a broken line are written, then
// the error names the line and the exit status is 1.
func TestClassifyBrokenLine(t *testing.T) {
	in := `{"name": "a", "inputSchema": {"properties": {"api_key": {}}}}
{"server_id": "s", "tools": [{"name": "b", "inputSchema": {"properties": {"url": {}}}}]}
{"name": "c", "inputSchema": {"properties": {"x": }}}
{"name": "d"}
`
	stdout, stderr, code := run(t, in, "classify")
	if code != exitFailure {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "line 3") {
		t.Errorf("stderr does not name line 3:\n%s", stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"tool": "a", "classes": ["gg:credential-value"]`) ||
		!strings.Contains(lines[1], `"server_id": "s", "tool": "b", "classes": ["gg:url-endpoint"]`) {
		t.Errorf("stdout:\n%s", stdout)
	}
}

func TestClassifySchemaFileAndSARIF(t *testing.T) {
	f := filepath.Join(t.TempDir(), "schema.json")
	os.WriteFile(f, []byte("{\n \"type\": \"object\",\n \"properties\": {\"password\": {}, \"amount\": {\"description\": \"amount in USD\"}},\n \"required\": [\"password\"]\n}\n"), 0o644)
	stdout, stderr, code := run(t, "", "classify", "--schema", f)
	if code != 0 || !strings.Contains(stdout, `"required_classes": ["gg:credential-value"]`) || !strings.Contains(stdout, `"gg:money-amount"`) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, "", "classify", "--schema", f, "--format", "sarif")
	if code != 0 || !strings.Contains(stdout, `"version": "2.1.0"`) || !strings.Contains(stdout, `"ruleId": "gg:credential-value"`) {
		t.Fatalf("sarif: exit %d\nstdout: %.500s\nstderr: %s", code, stdout, stderr)
	}
	if _, _, code := run(t, "", "classify", "--schema", filepath.Join(t.TempDir(), "missing.json")); code != exitFailure {
		t.Errorf("missing schema file: exit %d, want 3", code)
	}
}

// TestUsageLineListsEveryFlag: the usage line of every subcommand names
// every flag its flag set defines (the list of flags printed below it),
// and names no flag that does not exist.
func TestUsageLineListsEveryFlag(t *testing.T) {
	flagLine := regexp.MustCompile(`^  -([a-z0-9-]+)`)
	mentioned := regexp.MustCompile(`--([a-z0-9-]+)`)
	for name := range commands {
		stdout, _, code := run(t, "", name, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d", name, code)
		}
		line, rest, _ := strings.Cut(stdout, "\n\n")
		inLine := map[string]bool{}
		for _, m := range mentioned.FindAllStringSubmatch(line, -1) {
			inLine[m[1]] = true
		}
		defined := map[string]bool{}
		for _, l := range strings.Split(rest, "\n") {
			if m := flagLine.FindStringSubmatch(l); m != nil {
				defined[m[1]] = true
				if !inLine[m[1]] {
					t.Errorf("%s: the usage line does not name --%s:\n%s", name, m[1], line)
				}
			}
		}
		for f := range inLine {
			if !defined[f] {
				t.Errorf("%s: the usage line names --%s, which is not a flag:\n%s", name, f, line)
			}
		}
	}
}

// TestClassifyStdinSchemas: a bare schema on a line of stdin is labelled as
// --schema labels it; pretty-printed JSON on stdin is refused with a hint
// naming --schema -, which reads it as one document.
func TestClassifyStdinSchemas(t *testing.T) {
	pretty := "{\n  \"type\": \"object\",\n  \"properties\": {\"api_key\": {}}\n}\n"
	for _, c := range []struct {
		name, stdin string
		args        []string
		code        int
		stdout      string
		stderr      string
	}{
		{"bare schema line", `{"type":"object","properties":{"api_key":{}}}` + "\n", nil, 0, `"classes": ["gg:credential-value"]`, ""},
		{"pretty on stdin", pretty, nil, exitFailure, "", "--schema -"},
		{"schema -", pretty, []string{"--schema", "-"}, 0, `"classes": ["gg:credential-value"]`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := run(t, c.stdin, append([]string{"classify"}, c.args...)...)
			if code != c.code || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, c.code, stdout, stderr)
			}
			if c.code == exitFailure && !strings.Contains(stderr, "JSON Lines") {
				t.Errorf("the error does not say stdin is JSON Lines: %s", stderr)
			}
		})
	}
}
