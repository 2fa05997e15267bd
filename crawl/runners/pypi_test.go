package runners

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleScriptName: a console script whose name is not a plain file
// name is refused, never joined into a path elsewhere.
func TestConsoleScriptName(t *testing.T) {
	for _, tc := range []struct {
		scripts []string
		want    string // the script, or an error's words
		ok      bool
	}{
		{[]string{"tiny"}, "tiny", true},
		{[]string{"tiny-x"}, "tiny-x", true},
		{[]string{"../../../tmp/x"}, "not a plain file name", false},
		{[]string{"bin/x"}, "not a plain file name", false},
		{[]string{".."}, "not a plain file name", false},
		{[]string{"x\x00y"}, "not a plain file name", false},
		{[]string{"../tiny"}, "not a plain file name", false},
	} {
		venv := t.TempDir()
		d := filepath.Join(venv, "lib", "python3.12", "site-packages", "tiny-1.0.dist-info")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		ep := "[console_scripts]\n"
		for _, s := range tc.scripts {
			ep += s + " = tiny:main\n"
		}
		if err := os.WriteFile(filepath.Join(d, "entry_points.txt"), []byte(ep), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := consoleScript(venv, &Package{Identifier: "tiny", Version: "1.0"})
		switch {
		case tc.ok && (err != nil || got != tc.want):
			t.Errorf("%q: %q %v, want %q", tc.scripts, got, err, tc.want)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %q %v, want an error saying %q", tc.scripts, got, err, tc.want)
		}
	}
}
