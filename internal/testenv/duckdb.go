package testenv

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
)

// DuckDB runs sql in an in-memory DuckDB, the @duckdb/node-api package of
// NPMDir run by node, and returns its rows as JSON objects (DuckDB's
// BIGINT and DATE as strings). Without node or the packages it ends the
// test by Missing.
func DuckDB(t testing.TB, sql string) []map[string]any {
	t.Helper()
	node := NodePackages(t)
	// require.resolve looks from the working folder.
	check := exec.Command(node, "-e", "require.resolve('@duckdb/node-api')")
	check.Dir = NPMDir()
	if out, err := check.CombinedOutput(); err != nil {
		Missing(t, "@duckdb/node-api is not installed in %s (npm ci there): %s", NPMDir(), out)
	}
	cmd := exec.Command(node, filepath.Join(NPMDir(), "testdata", "duckdb-query.mjs"), sql)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("duckdb: %v\n%s\nquery: %s", err, stderr.String(), sql)
	}
	var rows []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		t.Fatalf("duckdb printed %q: %v", stdout.String(), err)
	}
	return rows
}
