package sha256x8

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestCommittedAssembly runs the avo generator in ./asm (a module of its
// own) and checks that block8_amd64.s is exactly its output, so nobody
// edits the generated file by hand or changes the generator without
// running go generate. Without the avo module (no module proxy, no cache)
// it ends by testenv.Missing: a skip, or a failure under CI=true.
func TestCommittedAssembly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds avo and runs the generator; not in -short")
	}
	goTool := testenv.Need(t, "go", "the Go toolchain runs the generator")
	download := exec.Command(goTool, "-C", "asm", "mod", "download")
	if out, err := download.CombinedOutput(); err != nil {
		testenv.Missing(t, "the generator's modules (avo) cannot be downloaded: %v\n%s", err, out)
	}
	out := filepath.Join(t.TempDir(), "block8_amd64.s")
	gen := exec.Command(goTool, "-C", "asm", "run", ".", "-out", out)
	var stderr strings.Builder
	gen.Stderr = &stderr
	if err := gen.Run(); err != nil {
		t.Fatalf("go -C asm run .: %v\n%s", err, stderr.String())
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("block8_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Fatal("block8_amd64.s differs from the generator's output; run go generate ./internal/sha256x8")
	}
}
