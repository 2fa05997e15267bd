package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/atlas-reproduce/atlas-reproduce"

// Each half, as ARCHITECTURE.md draws it.
var (
	analysis    = []string{"label/...", "pipeline/...", "hashverify/...", "aggregate/...", "report/...", "history/...", "publish/...", "evaluate/..."}
	acquisition = []string{"crawl/...", "fetch/...", "synth/...", "internal/sandbox/..."}
	services    = []string{"serve/...", "proxy/..."}
	// stages are the analysis packages the acquisition half may not
	// import: hashverify (manifests, hashing on the read) it may.
	stages = []string{"pipeline/...", "aggregate/...", "report/..."}
	mcpSDK = "github.com/modelcontextprotocol/go-sdk"
)

// paths turns the package patterns of ARCHITECTURE.md into the module paths
// that go list prints, "x/..." standing for x and all below it.
func paths(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		out = append(out, module+"/"+strings.TrimSuffix(p, "/..."))
	}
	return out
}

// TestImportRules holds each rule of ARCHITECTURE.md's "Imports" against
// the whole dependency list (go list's .Deps) of each package the rule
// governs. control is a package that does depend on what the rule forbids:
// the check must find it there, which proves it reads the list it means to.
func TestImportRules(t *testing.T) {
	l := list(t)
	tests := []struct {
		name      string
		packages  []string
		forbidden []string
		control   string
	}{
		{"analysis imports no acquisition nor the MCP SDK", analysis, append(paths(acquisition), mcpSDK), "crawl"},
		{"acquisition imports no analysis stage nor service", acquisition, append(paths(stages), paths(services)...), "cmd/atlas-reproduce"},
		{"services import no pipeline nor acquisition", services, append(paths([]string{"pipeline/..."}), paths(acquisition)...), "cmd/atlas-reproduce"},
		// The crawl's three rooms: the probe speaks MCP and knows nothing
		// of how a packaged server is installed or where it runs.
		{"the probe imports no runner, sandbox nor OCI root", []string{"crawl/probe/..."}, paths([]string{"crawl/runners/...", "internal/sandbox/...", "internal/ociroot/..."}), "crawl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if len(within(l.deps[module+"/"+tc.control], tc.forbidden)) == 0 {
				t.Errorf("the check finds none of %v among the dependencies of %s", tc.forbidden, tc.control)
			}
			n := 0
			for _, pkg := range l.pkgs {
				if len(within([]string{pkg}, paths(tc.packages))) == 0 {
					continue
				}
				n++
				if bad := within(l.deps[pkg], tc.forbidden); len(bad) > 0 {
					t.Errorf("%s depends on %s", pkg, strings.Join(bad, ", "))
				}
			}
			if n == 0 {
				t.Errorf("no package of the module is among %v", tc.packages)
			}
		})
	}
}

// TestOnlyImporters holds the rules that name the only packages (tests
// left out) allowed to import a module or package directly.
func TestOnlyImporters(t *testing.T) {
	l := list(t)
	tests := []struct {
		module string
		only   []string
	}{
		{"github.com/apache/arrow-go", []string{module + "/report/tables"}},
		{"github.com/schollz/progressbar", []string{module + "/cmd/atlas-reproduce"}},
		{"golang.org/x/term", []string{module + "/cmd/atlas-reproduce"}},
		// The deposition client is the command's: publish writes files only.
		{module + "/publish/zenodo", []string{module + "/cmd/atlas-reproduce"}},
		// The runners are the crawl's only way to the sandbox and the OCI
		// root; cmd wires the sandbox command, the crawl's flags and the
		// config scan's image tags, and npmtest starts npm in a sandbox.
		{module + "/internal/sandbox", []string{module + "/cmd/atlas-reproduce", module + "/crawl/runners", module + "/internal/npmtest"}},
		{module + "/internal/ociroot", []string{module + "/cmd/atlas-reproduce", module + "/crawl/runners"}},
		// Test plumbing reaches no program: only tests import it.
		{module + "/crawl/internal/crawltest", nil},
		{module + "/internal/testenv", []string{module + "/crawl/internal/crawltest", module + "/internal/npmtest"}},
		{module + "/internal/npmtest", nil},
		{module + "/internal/jsonref", nil},
	}
	for _, tc := range tests {
		t.Run(tc.module, func(t *testing.T) {
			var importers []string
			for _, pkg := range l.pkgs {
				if len(within(l.imports[pkg], []string{tc.module})) > 0 {
					importers = append(importers, pkg)
				}
			}
			if !slices.Equal(importers, tc.only) {
				t.Errorf("%s is imported by %v, want only %v", tc.module, importers, tc.only)
			}
		})
	}
}

// within returns the packages of pkgs that are one of roots or below one.
func within(pkgs, roots []string) []string {
	var found []string
	for _, p := range pkgs {
		for _, r := range roots {
			if p == r || strings.HasPrefix(p, r+"/") {
				found = append(found, p)
				break
			}
		}
	}
	return found
}

// listing is the module's packages (tests left out), sorted, each with the
// packages it imports itself and all it depends on.
type listing struct {
	pkgs          []string
	imports, deps map[string][]string
}

// list runs go list once over the module.
func list(t *testing.T) listing {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command on PATH: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list %s/...: %v", module, err)
	}
	l := listing{imports: map[string][]string{}, deps: map[string][]string{}}
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		l.pkgs = append(l.pkgs, f[0])
		l.imports[f[0]] = strings.Fields(f[1])
		l.deps[f[0]] = strings.Fields(f[2])
	}
	slices.Sort(l.pkgs)
	if !slices.Contains(l.deps[module+"/report/tables"], "github.com/apache/arrow-go/v18/parquet") {
		t.Fatalf("go list lists no Parquet among report/tables' dependencies: the check reads the wrong list")
	}
	return l
}

// TestLayoutListsEveryPackage keeps the map true: ARCHITECTURE.md names
// every package of the module (the short README links to it rather than
// repeating the list).
func TestLayoutListsEveryPackage(t *testing.T) {
	l := list(t)
	for _, doc := range []string{"ARCHITECTURE.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range l.pkgs {
			rel := strings.TrimPrefix(pkg, module+"/")
			if !strings.Contains(string(b), "`"+rel+"`") && !strings.Contains(string(b), "`"+rel+"/`") {
				t.Errorf("%s does not name the package %s (as `%s`)", doc, rel, rel)
			}
		}
	}
}
