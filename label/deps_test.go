package label

import (
	"os/exec"
	"strings"
	"testing"
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

// heavyDeps returns the packages among the dependencies of pkg that belong
// to a heavy module.
func heavyDeps(t *testing.T, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command on PATH: %v", err)
	}
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

// TestNoHeavyDependencies keeps label importable by a gateway for the
// classifier alone. The second case proves the check sees such a
// dependency where there is one.
func TestNoHeavyDependencies(t *testing.T) {
	t.Run("label", func(t *testing.T) {
		if found := heavyDeps(t, "."); len(found) > 0 {
			t.Errorf("label depends on %s", strings.Join(found, ", "))
		}
	})
	t.Run("report has arrow-go", func(t *testing.T) {
		for _, dep := range heavyDeps(t, "../report") {
			if strings.HasPrefix(dep, "github.com/apache/arrow-go/") {
				return
			}
		}
		t.Error("the check finds no arrow-go under report")
	})
}
