package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// registryTypes are the package types of server.json, as string literals
// and as the names crawl/runners gives them.
var registryTypes = map[string]bool{
	`"npm"`: true, `"pypi"`: true, `"oci"`: true, `"mcpb"`: true, `"nuget"`: true,
	"RegistryNPM": true, "RegistryPyPI": true, "RegistryOCI": true, "RegistryMCPB": true, "RegistryNuGet": true,
}

// table is the one file allowed to dispatch on a registry type: the
// runners' table.
const table = "crawl/runners/table.go"

// dispatches lists where a file dispatches on a registry type: a case of
// a switch, or an operand of == or !=, that is a registry type's literal
// or name. A registry type as data (a record's field, a map key, a
// constant's value, a log's text) is no dispatch.
func dispatches(fset *token.FileSet, f *ast.File) []string {
	var found []string
	isType := func(e ast.Expr) bool {
		switch e := ast.Unparen(e).(type) {
		case *ast.BasicLit:
			return e.Kind == token.STRING && registryTypes[strings.ReplaceAll(e.Value, "`", `"`)]
		case *ast.Ident:
			return registryTypes[e.Name]
		case *ast.SelectorExpr:
			return registryTypes[e.Sel.Name]
		}
		return false
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CaseClause:
			for _, e := range n.List {
				if isType(e) {
					found = append(found, fset.Position(e.Pos()).String()+": case on a registry type")
				}
			}
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (isType(n.X) || isType(n.Y)) {
				found = append(found, fset.Position(n.Pos()).String()+": comparison with a registry type")
			}
		}
		return true
	})
	return found
}

// TestDispatchCheck holds the check to what it must find and let pass.
func TestDispatchCheck(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{`switch p.RegistryType { case RegistryNPM: run() }`, 1},
		{`switch t { case "oci", "mcpb": pinned() }`, 2},
		{`if p.RegistryType == runners.RegistryPyPI { x() }`, 1},
		{"ok := `nuget` != t", 1},
		{`switch { case t == "npm": x() }`, 1},
		{`info := RunnerInfo{Runner: RegistryNPM}; _ = info`, 0},
		{`m := map[string]int{RegistryOCI: 1}; _ = m`, 0},
		{`log("no runner for npm packages"); exec.LookPath("npm")`, 0},
		{`switch cmd { case "npx": x() }`, 0},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\nfunc f() {\n"+tc.src+"\n}\n", 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := dispatches(fset, f); len(got) != tc.want {
			t.Errorf("%s: found %d dispatches %v, want %d", tc.src, len(got), got, tc.want)
		}
	}
}

// TestNoDispatchOnRegistryType holds "no switch on package type outside
// the table": in the crawl's three rooms and the command that drives them,
// only the runners' table dispatches on a registry type, so that adding a
// type is its runner's file and a line of the table. An agent config's
// launcher (npx, uvx, docker) is another thing, internal/agentconfig's.
func TestNoDispatchOnRegistryType(t *testing.T) {
	root := filepath.Join("..", "..")
	files := 0
	for _, dir := range []string{"crawl", "cmd/atlas-reproduce"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil || filepath.ToSlash(rel) == table || strings.Contains(rel, "testdata") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			files++
			for _, d := range dispatches(fset, f) {
				t.Errorf("%s (only %s dispatches on a registry type)", d, table)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 50 {
		t.Fatalf("read %d files only: the check reads the wrong folders", files)
	}
}
