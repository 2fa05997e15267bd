package hashverify

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// TestReadSHA256SumsHalfCommitted: a manifest in a folder left between two
// sets is refused, not read as describing the files beside it.
func TestReadSHA256SumsHalfCommitted(t *testing.T) {
	dir := t.TempDir()
	sums := filepath.Join(dir, "SHA256SUMS")
	line := "2350dc773dc43fd6ed0b012588f3ff295fb358106a0291a7dc59c57427f5780f  " + release.ToolsFile + "\n"
	if err := os.WriteFile(sums, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSHA256Sums(sums); err != nil {
		t.Fatalf("complete folder: %v", err)
	}
	// The journal outset keeps while a commit is between its renames.
	if err := os.WriteFile(filepath.Join(dir, ".outset-commit"), []byte(`{"files":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var ie *outset.InterruptedError
	_, err := ReadSHA256Sums(sums)
	if !errors.As(err, &ie) {
		t.Fatalf("half-committed folder: err = %v, want *outset.InterruptedError", err)
	}
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("half-committed folder: errors.Is(%v, ErrInterrupted) is false: callers outside the module cannot tell", err)
	}
}
