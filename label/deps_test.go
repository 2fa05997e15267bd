package label

import (
	"slices"
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
// classifier alone.
func TestNoHeavyDependencies(t *testing.T) {
	testenv.NoDeps(t, ".", heavy, "github.com/atlas-reproduce/atlas-reproduce/report/tables")
}

// TestOnlyTheLibrary holds label's whole dependency list (go list -deps)
// to the library's own packages and the standard library: no
// golang.org/x, nothing of the run (pipeline) or of the services.
func TestOnlyTheLibrary(t *testing.T) {
	const module = "github.com/atlas-reproduce/atlas-reproduce/"
	allowed := func(p string) bool {
		rel, ok := strings.CutPrefix(p, module)
		return ok && (rel == "label" || strings.HasPrefix(rel, "label/")) && !strings.HasSuffix(rel, "_test")
	}
	deps := testenv.Deps(t, ".")
	var extra []string
	for _, dep := range deps {
		if !allowed(dep) {
			extra = append(extra, dep)
		}
	}
	if len(extra) > 0 {
		t.Errorf("label depends on %s beyond the library and the standard library", strings.Join(extra, ", "))
	}
	for _, want := range []string{"label", "label/census", "label/classify", "label/sensitivity"} {
		if !slices.Contains(deps, module+want) {
			t.Errorf("go list -deps does not list %s: the check reads the wrong list", want)
		}
	}
}
