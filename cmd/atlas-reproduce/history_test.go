package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryCommand adds two synth releases to a dataset from the command
// line: the summary names them, the same runs again write nothing, another
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
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"add two", []string{"history", "--out", ds, runB, runA}, 0, "2 releases; added december, 2026-11-02; history rewritten (pairs of consecutive releases compared: 1, kept from the history before: 0)"},
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
