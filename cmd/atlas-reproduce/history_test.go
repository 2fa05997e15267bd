package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
)

// TestHistoryCommand adds two synth releases to a dataset from the command
// line: the summary names them, the second's rows in history.parquet are
// what diff --json says of the two runs, the same runs again write nothing, another
// run under a release id the dataset holds exits 1 unless --replace, and a
// bad invocation exits 2.
func TestHistoryCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	runA, runB, other := filepath.Join(dir, "run-a"), filepath.Join(dir, "run-b"), filepath.Join(dir, "other")
	ds := filepath.Join(dir, "dataset")
	for _, s := range [][]string{
		{"synth", "--tools", "3000", "--out", a, "--progress=false"},
		{"synth", "--next-of", a, "--out", b, "--edits", "12", "--seed", "3"},
		{"run", "--data", a, "--sha256sums", filepath.Join(a, "SHA256SUMS"), "--out", runA, "--release-date", "2026-11-02", "--progress=false"},
		{"run", "--data", b, "--sha256sums", filepath.Join(b, "SHA256SUMS"), "--out", runB, "--release-id", "december", "--release-date", "2026-12-02", "--progress=false"},
		{"run", "--data", b, "--sha256sums", filepath.Join(b, "SHA256SUMS"), "--out", other, "--release-date", "2026-11-02", "--progress=false"},
	} {
		if _, stderr, code := run(t, "", s...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", s, code, stderr)
		}
	}
	if _, stderr, code := run(t, "", "history", "--out", ds, runB, runA); code != 0 || !strings.Contains(stderr, "2 releases; added december, 2026-11-02; history rewritten (pairs of consecutive releases compared: 1, kept from the history before: 0)") {
		t.Fatalf("history: exit %d\n%s", code, stderr)
	}
	// december's rows say what diff says of the two runs, which differ
	// by the seeded edits.
	stdout, stderr, code := run(t, "", "diff", "--json", runA, runB)
	if code != 0 {
		t.Fatalf("diff: exit %d\n%s", code, stderr)
	}
	var d report.DiffResult
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := tables.ReadHistory(context.Background(), filepath.Join(ds, "history.parquet"), func(r *report.HistoryRow) error {
		if r.Release != "december" || !r.Normative {
			return nil
		}
		n++
		got := fmt.Sprintf("%d %d %d %d %d", *r.ToolsAdded, *r.ToolsRemoved, *r.ToolsChanged, *r.Gained, *r.Lost)
		want := fmt.Sprintf("%d %d %d %d %d", d.Tools.Added, d.Tools.Removed, d.Tools.Changed, d.ClassesGained[r.Class], d.ClassesLost[r.Class])
		if got != want {
			t.Errorf("%s: history.parquet says %s, diff %s", r.Class, got, want)
		}
		return nil
	})
	if err != nil || n != 5 {
		t.Errorf("%d rows of december's classes read: %v", n, err)
	}
	if d.Tools.Added+d.Tools.Removed+d.Tools.Changed == 0 {
		t.Error("the two releases do not differ: the comparison went untested")
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"the same again", []string{"history", runA, "--out", ds, runB}, 0, "already there 2026-11-02, december; history unchanged (pairs of consecutive releases compared: 0, kept from the history before: 1)"},
		{"another run of a release there", []string{"history", "--out", ds, other}, exitFailure, "--replace to replace it"},
		{"replaced", []string{"history", "--out", ds, "--replace", other}, 0, "replaced 2026-11-02; history rewritten"},
		{"no run", []string{"history", "--out", ds}, exitUsage, "at least one run folder"},
		{"no dataset", []string{"history", runA}, exitUsage, "--out DATASET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.code, stderr, tc.want)
			}
		})
	}
	for _, name := range []string{"history.parquet", "history.md", "history.html", "release=december/tools.parquet", "release=2026-11-02/report.json"} {
		if _, err := os.Stat(filepath.Join(ds, name)); err != nil {
			t.Errorf("the dataset lacks %s: %v", name, err)
		}
	}
}
