package synth

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// TestNearMiss checks the near-miss profile's shape: every tool a
// definition of its own, zero to a few properties, a large share of
// names that hold a rule's form inside a longer word and carry no class,
// in all three cases, and a ground truth equal to what the Python reference
// counts in the written file.
func TestNearMiss(t *testing.T) {
	py := testenv.Python3(t)
	dir := filepath.Join(t.TempDir(), "nearmiss")
	truth, err := Write(t.Context(), dir, Options{Tools: 8000, Servers: 470, Seed: 5, Shape: ShapeServers, NearMiss: true})
	if err != nil {
		t.Fatal(err)
	}
	var forms []string
	for _, r := range classify.Rules() {
		forms = append(forms, r.Forms...)
	}
	var d census.Decoder
	defs := make(map[string]bool)
	names := make(map[string]bool)
	tools, props, near, camel, kebab, none, big := 0, 0, 0, 0, 0, 0, 0
	for _, line := range splitLines(t, readGzip(t, filepath.Join(dir, release.ToolsFile)), release.ToolsFile) {
		rec, err := d.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range rec.Tools {
			tools++
			if defs[string(tool.Raw)] {
				t.Errorf("definition served twice: %s", tool.Raw)
			}
			defs[string(tool.Raw)] = true
			props += len(tool.Properties)
			switch n := len(tool.Properties); {
			case n == 0:
				none++
			case n > 8:
				big++
			}
			for _, p := range tool.Properties {
				name := string(p.Name)
				names[name] = true
				if classify.Property(name, string(p.Description)) != 0 || !holdsFormInWord(name, forms) {
					continue
				}
				near++
				switch {
				case strings.Contains(name, "-"):
					kebab++
				case strings.ToLower(name) != name:
					camel++
				}
			}
		}
	}
	if tools != truth.Tools || tools != 8000 {
		t.Fatalf("%d tools decoded, truth %d, want 8000", tools, truth.Tools)
	}
	if pt := float64(props) / float64(tools); pt < 1 || pt > 4 {
		t.Errorf("%.2f properties a tool, want zero to a few (1 to 4 on average)", pt)
	}
	if none == 0 || big > tools/50 {
		t.Errorf("%d tools without properties, %d with more than 8; want some and few", none, big)
	}
	if near < props/4 || camel == 0 || kebab == 0 {
		t.Errorf("%d near-miss properties of %d (%d camelCase, %d kebab-case); want a quarter or more in every case", near, props, camel, kebab)
	}
	if len(names) < 1000 {
		t.Errorf("%d distinct property names; want a rich vocabulary", len(names))
	}
	out, err := exec.Command(py, testenv.ReferencePy(), "census", filepath.Join(dir, release.ToolsFile)).Output()
	if err != nil {
		t.Fatalf("reference.py census: %v", err)
	}
	if file := readAll(t, filepath.Join(dir, TruthFile)); !bytes.Equal(out, file) {
		t.Errorf("truth.json differs from reference.py census:\n got %s\nwant %s", file, out)
	}
}

// holdsFormInWord reports whether name, lowered, holds one of the forms
// joined to other letters: a near-miss, not the word itself.
func holdsFormInWord(name string, forms []string) bool {
	low := strings.ToLower(name)
	for _, f := range forms {
		for i := strings.Index(low, f); i >= 0; {
			before := i > 0 && isLower(low[i-1])
			after := i+len(f) < len(low) && isLower(low[i+len(f)])
			if before || after {
				return true
			}
			j := strings.Index(low[i+1:], f)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return false
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
