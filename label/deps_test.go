package label

import (
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// heavy are the module paths a gateway importing label must not pull in:
// the run's Parquet, parallel gzip and progress bars, and a server's MCP
// SDK and metrics.
var heavy = []string{
	"github.com/apache/arrow-go",
	"github.com/klauspost/pgzip",
	"github.com/schollz/progressbar",
	"github.com/modelcontextprotocol",
	"github.com/prometheus",
}

// TestNoHeavyDependencies keeps label importable by a gateway for the
// classifier alone. The second case proves the check sees such a
// dependency where there is one.
func TestNoHeavyDependencies(t *testing.T) {
	t.Run("label", func(t *testing.T) {
		if found := testenv.DepsIn(t, ".", heavy); len(found) > 0 {
			t.Errorf("label depends on %s", strings.Join(found, ", "))
		}
	})
	t.Run("report/tables has arrow-go", func(t *testing.T) {
		for _, dep := range testenv.DepsIn(t, "../report/tables", heavy) {
			if strings.HasPrefix(dep, "github.com/apache/arrow-go/") {
				return
			}
		}
		t.Error("the check finds no arrow-go under report/tables")
	})
}
