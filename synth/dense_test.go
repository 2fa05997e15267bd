package synth

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// TestDense checks that the dense census has about twice the default's
// properties per tool, with short descriptions, and that its ground truth
// still equals what the Python reference counts in the written file.
func TestDense(t *testing.T) {
	py := testenv.Python3(t)
	base := Options{Tools: 6000, Servers: 300, Seed: 3, Shape: ShapeServers}
	dense := base
	dense.Dense = true
	plainDir := filepath.Join(t.TempDir(), "plain")
	plainTruth, err := Write(t.Context(), plainDir, base)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dense")
	denseTruth, err := Write(t.Context(), dir, dense)
	if err != nil {
		t.Fatal(err)
	}
	pp, pd := propStats(t, plainDir)
	dp, dd := propStats(t, dir)
	if dp < 3.5 || dp > 5 || dp < 1.8*pp {
		t.Errorf("properties per tool: dense %.2f, default %.2f; want about 4 and about twice", dp, pp)
	}
	if dd > shortDescLen || dd >= pd {
		t.Errorf("mean property description: dense %.1f bytes, default %.1f; want short", dd, pd)
	}
	if plainTruth.Tools != denseTruth.Tools {
		t.Errorf("%d tools dense, %d default", denseTruth.Tools, plainTruth.Tools)
	}
	out, err := exec.Command(py, testenv.ReferencePy(), "census", filepath.Join(dir, release.ToolsFile)).Output()
	if err != nil {
		t.Fatalf("reference.py census: %v", err)
	}
	if file := readAll(t, filepath.Join(dir, TruthFile)); !bytes.Equal(out, file) {
		t.Errorf("truth.json differs from reference.py census:\n got %s\nwant %s", file, out)
	}
}

// propStats decodes a census for its properties per tool and the mean
// length of their descriptions.
func propStats(t *testing.T, dir string) (perTool, descLen float64) {
	t.Helper()
	var d census.Decoder
	tools, props, desc := 0, 0, 0
	for _, line := range splitLines(t, readGzip(t, filepath.Join(dir, release.ToolsFile)), release.ToolsFile) {
		rec, err := d.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range rec.Tools {
			tools++
			props += len(tool.Properties)
			for _, p := range tool.Properties {
				desc += len(p.Description)
			}
		}
	}
	return float64(props) / float64(tools), float64(desc) / float64(props)
}

// TestShortDesc cuts at a word boundary, or inside a long word at a rune
// boundary.
func TestShortDesc(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"short", "short"},
		{"The path of the file to read from the local disk", "The path of the file to read"},
		{"ééééééééééééééééééééééééééééééééééé", "éééééééééééééééé"},
	} {
		t.Run(c.in, func(t *testing.T) {
			if got := shortDesc(c.in); got != c.want || len(got) > shortDescLen {
				t.Errorf("shortDesc(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
