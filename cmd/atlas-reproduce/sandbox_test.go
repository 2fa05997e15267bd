package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
)

// TestSandboxCheck: sandbox check says what the sandbox allows where it
// works, and names what is missing (and exits 1) where it does not.
func TestSandboxCheck(t *testing.T) {
	npmtest.NeedSandbox(t)
	stdout, stderr, code := run(t, "", "sandbox", "check")
	if code != 0 || !strings.Contains(stdout, "sandbox: works") || !strings.Contains(stdout, "no capability") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	// Without bwrap (PATH holds the other tools alone).
	bin := t.TempDir()
	for _, tool := range []string{"prlimit", "setpriv"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	stdout, stderr, code = run(t, "", "sandbox", "check")
	if code != exitVerdict || !strings.Contains(stdout, "missing: no bwrap on PATH") || !strings.Contains(stdout, "apt-get install -y bubblewrap") || strings.Contains(stdout, "prlimit") {
		t.Errorf("without bwrap: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, _, code := run(t, "", "sandbox", "frobnicate"); code != exitUsage {
		t.Errorf("sandbox frobnicate: exit %d, want %d", code, exitUsage)
	}
}
