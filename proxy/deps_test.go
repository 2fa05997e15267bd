package proxy

import (
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
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
		"github.com/atlas-reproduce/atlas-reproduce/pipeline",
		"github.com/atlas-reproduce/atlas-reproduce/report",
	}
	deps := func(pkg string) []string { return testenv.DepsIn(t, pkg, heavy) }
	t.Run("proxy", func(t *testing.T) {
		if found := deps("."); len(found) > 0 {
			t.Errorf("proxy depends on %s", strings.Join(found, ", "))
		}
	})
	t.Run("the check sees the pipeline", func(t *testing.T) {
		if found := deps("github.com/atlas-reproduce/atlas-reproduce/pipeline"); len(found) == 0 {
			t.Error("no heavy dependency found in the pipeline")
		}
	})
}
