package classify

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestTablesMatchPython regenerates the Unicode tables from the CPython on
// this machine: a CPython with another Unicode version would label some
// inputs differently, and this says so instead of letting the oracle tests
// fail obscurely.
func TestTablesMatchPython(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating the tables takes seconds; -short skips it")
	}
	out, err := exec.Command(testenv.Python3(t), "gen_unicode.py").Output()
	if err != nil {
		t.Fatalf("gen_unicode.py: %v", err)
	}
	committed, err := os.ReadFile("unicode_tables.go")
	if err != nil {
		t.Fatal(err)
	}
	// The header names the CPython patch version; the tables are what count.
	strip := func(b []byte) []byte { return b[bytes.IndexByte(b, '\n'):] }
	if !bytes.Equal(strip(out), strip(committed)) {
		t.Fatalf("unicode_tables.go differs from what this machine's CPython gives; run go generate ./label/classify and review the diff")
	}
}
