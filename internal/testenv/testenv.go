// Package testenv holds what the tests of several packages need from the
// machine: python3 (the CPython oracle and the Python MCP server), and the
// dependency list of a package. Tests fail, never skip, when a tool is
// missing: python3 is on every machine the project runs its tests on.
package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Python3 returns the path of python3, failing the test when there is none.
func Python3(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("the CPython oracle and the Python test servers need python3 on PATH: %v", err)
	}
	return p
}

// Root is the module's root folder, found from this source file's place in
// it, so that a test in any package reaches the repository's shared files.
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("testenv: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// ReferencePy is the path of the spec's Python reference (bench/reference.py).
func ReferencePy() string { return filepath.Join(Root(), "bench", "reference.py") }

// PythonMCPServer runs the standard-library MCP server at script (it prints
// "PORT n" once it listens) on loopback until the test ends, and returns its
// endpoint URL.
func PythonMCPServer(t testing.TB, script string) string {
	t.Helper()
	cmd := exec.Command(Python3(t), script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var port int
	if _, serr := fmt.Sscanf(line, "PORT %d", &port); err != nil || serr != nil {
		t.Fatalf("python server did not start: %q %v %v; stderr: %s", line, err, serr, stderr.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// PythonMCPServerTools is the tools the script of PythonMCPServer serves,
// each as its raw JSON text, as its --dump prints them.
func PythonMCPServerTools(t testing.TB, script string) []string {
	t.Helper()
	out, err := exec.Command(Python3(t), script, "--dump").Output()
	if err != nil {
		t.Fatal(err)
	}
	var raws []string
	if err := json.Unmarshal(out, &raws); err != nil {
		t.Fatal(err)
	}
	return raws
}

// Deps returns the packages outside the standard library among the
// dependencies of pkg, pkg itself included, as go list -deps names them.
func Deps(t testing.TB, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command on PATH: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// DepsIn returns the packages among the dependencies of pkg (as go list -deps
// names them) that belong to one of modules.
func DepsIn(t testing.TB, pkg string, modules []string) []string {
	t.Helper()
	var found []string
	for _, dep := range Deps(t, pkg) {
		for _, m := range modules {
			if dep == m || strings.HasPrefix(dep, m+"/") {
				found = append(found, dep)
			}
		}
	}
	return found
}

// NoDeps fails t when pkg depends on a package of modules. control is a
// package that does depend on one: the check must find it there, which
// proves it reads the list it means to.
func NoDeps(t *testing.T, pkg string, modules []string, control string) {
	t.Helper()
	t.Run(pkg, func(t *testing.T) {
		if found := DepsIn(t, pkg, modules); len(found) > 0 {
			t.Errorf("%s depends on %s", pkg, strings.Join(found, ", "))
		}
	})
	t.Run("the check sees "+control, func(t *testing.T) {
		if found := DepsIn(t, control, modules); len(found) == 0 {
			t.Errorf("the check finds none of %s in %s", strings.Join(modules, ", "), control)
		}
	})
}

// Need returns the path of the tool name, for a test that cannot run
// without it, or ends the test by Missing. why says what the tool is for
// and how to install it.
func Need(t testing.TB, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if why != "" {
		Missing(t, "%s is not on PATH (%s)", name, why)
	}
	Missing(t, "%s is not on PATH", name)
	return ""
}
