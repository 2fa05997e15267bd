package label

import (
	"os/exec"
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

// TestOnlyTheLibrary holds label's whole dependency list (go list -deps)
// to the library's own packages and the standard library: no
// golang.org/x, nothing of the run (pipeline) or of the services.
func TestOnlyTheLibrary(t *testing.T) {
	const module = "github.com/atlas-reproduce/atlas-reproduce/"
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command on PATH: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := func(p string) bool {
		rel, ok := strings.CutPrefix(p, module)
		return ok && (rel == "label" || strings.HasPrefix(rel, "label/")) && !strings.HasSuffix(rel, "_test")
	}
	deps := strings.Fields(string(out))
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
