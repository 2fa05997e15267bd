package proxy

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoRunDependencies keeps the proxy light to embed in a gateway: it
// labels with package label, never through the run's Parquet, parallel
// gzip or progress bars. The second case proves the check sees such a
// dependency where there is one.
func TestNoRunDependencies(t *testing.T) {
	heavy := []string{
		"github.com/apache/arrow-go",
		"github.com/klauspost/pgzip",
		"github.com/schollz/progressbar",
		"github.com/atlas-reproduce/atlas-reproduce/runner",
		"github.com/atlas-reproduce/atlas-reproduce/report",
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command on PATH: %v", err)
	}
	deps := func(pkg string) []string {
		out, err := exec.Command(goBin, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var found []string
		for _, dep := range strings.Fields(string(out)) {
			for _, h := range heavy {
				if dep == h || strings.HasPrefix(dep, h+"/") {
					found = append(found, dep)
				}
			}
		}
		return found
	}
	t.Run("proxy", func(t *testing.T) {
		if found := deps("."); len(found) > 0 {
			t.Errorf("proxy depends on %s", strings.Join(found, ", "))
		}
	})
	t.Run("the check sees runner", func(t *testing.T) {
		if found := deps("github.com/atlas-reproduce/atlas-reproduce/runner"); len(found) == 0 {
			t.Error("no heavy dependency found in runner")
		}
	})
}
