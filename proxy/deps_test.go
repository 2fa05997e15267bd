package proxy

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestNoRunDependencies keeps the proxy light to embed in a gateway: it
// labels with package label, never through the run's Parquet, parallel
// gzip or progress bars.
func TestNoRunDependencies(t *testing.T) {
	heavy := []string{
		"github.com/apache/arrow-go",
		"github.com/klauspost/pgzip",
		"github.com/schollz/progressbar",
		"github.com/atlas-reproduce/atlas-reproduce/pipeline",
		"github.com/atlas-reproduce/atlas-reproduce/report",
	}
	testenv.NoDeps(t, ".", heavy, "github.com/atlas-reproduce/atlas-reproduce/pipeline")
}
