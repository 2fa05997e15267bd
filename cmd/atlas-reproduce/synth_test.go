package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// TestSynthScalesServers: --tools alone scales the servers with the
// snapshot's tools per server; --servers given is kept, and checked.
func TestSynthScalesServers(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--tools", "1000"}, 0, "1000 tools on 57 servers"},
		{[]string{"--tools", "10"}, 0, "10 tools on 1 servers"},
		{[]string{"--tools", "1000", "--servers", "3"}, 0, "1000 tools on 3 servers"},
		{[]string{"--tools", "10", "--servers", "11"}, exitUsage, "must be at least --servers"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "data")
			_, stderr, code := run(t, "", append([]string{"synth", "--out", out, "--progress=false"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.code, stderr, tc.want)
			}
		})
	}
}

// TestSynthNextDiff: a next release made by synth --next-of, run beside
// the first, is diffed to exactly the seeded edits listed in edits.json:
// the tools added, removed and changed, and the gains of
// gg:credential-value; and the same seed makes the same release.
func TestSynthNextDiff(t *testing.T) {
	dir := t.TempDir()
	a, b, b2 := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "b2")
	steps := [][]string{
		{"synth", "--tools", "3000", "--out", a, "--progress=false"},
		{"synth", "--next-of", a, "--out", b, "--edits", "16", "--seed", "7"},
		{"synth", "--next-of", a, "--out", b2, "--edits", "16", "--seed", "7"},
		{"run", "--data", a, "--sha256sums", filepath.Join(a, "SHA256SUMS"), "--out", filepath.Join(dir, "run-a"), "--progress=false"},
		{"run", "--data", b, "--sha256sums", filepath.Join(b, "SHA256SUMS"), "--out", filepath.Join(dir, "run-b"), "--progress=false"},
	}
	for _, s := range steps {
		if _, stderr, code := run(t, "", s...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", s, code, stderr)
		}
	}
	for _, name := range []string{"server_tools.jsonl.gz", "edits.json", "SHA256SUMS"} {
		x, _ := os.ReadFile(filepath.Join(b, name))
		y, _ := os.ReadFile(filepath.Join(b2, name))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two next releases of one seed", name)
		}
	}
	edits, err := synth.ReadEdits(b)
	if err != nil || len(edits) != 16 {
		t.Fatalf("edits: %d, %v", len(edits), err)
	}
	stdout, stderr, code := run(t, "", "diff", "--json", filepath.Join(dir, "run-a"), filepath.Join(dir, "run-b"))
	if code != 0 {
		t.Fatalf("diff: exit %d\n%s", code, stderr)
	}
	var d struct {
		Tools   struct{ Added, Removed, Changed int }
		Changes struct {
			Added, Removed, Changed []struct {
				ServerID      string   `json:"server_id"`
				Tool          string   `json:"tool"`
				ClassesGained []string `json:"classes_gained"`
			}
		} `json:"tool_changes"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	gains := map[string]bool{}
	for _, e := range edits {
		kind := e.Kind
		if kind == synth.EditGained {
			kind = synth.EditChanged
			gains[e.ServerID+" "+e.Tool] = true
		}
		want[kind] = append(want[kind], e.ServerID+" "+e.Tool)
	}
	got := map[string][]string{}
	for kind, list := range map[string]*[]struct {
		ServerID      string   `json:"server_id"`
		Tool          string   `json:"tool"`
		ClassesGained []string `json:"classes_gained"`
	}{synth.EditAdded: &d.Changes.Added, synth.EditRemoved: &d.Changes.Removed, synth.EditChanged: &d.Changes.Changed} {
		for _, c := range *list {
			id := c.ServerID + " " + c.Tool
			got[kind] = append(got[kind], id)
			if gains[id] && !slices.Contains(c.ClassesGained, "gg:credential-value") {
				t.Errorf("%s was given api_key but gained %v", id, c.ClassesGained)
			}
		}
	}
	for _, kind := range []string{synth.EditAdded, synth.EditRemoved, synth.EditChanged} {
		slices.Sort(want[kind])
		slices.Sort(got[kind])
		if !slices.Equal(want[kind], got[kind]) {
			t.Errorf("%s: diff reports\n%v\nthe edits were\n%v", kind, got[kind], want[kind])
		}
	}
	if d.Tools.Added != len(want[synth.EditAdded]) || d.Tools.Removed != len(want[synth.EditRemoved]) || d.Tools.Changed != len(want[synth.EditChanged]) {
		t.Errorf("counts %+v, edits %d added, %d removed, %d changed", d.Tools, len(want[synth.EditAdded]), len(want[synth.EditRemoved]), len(want[synth.EditChanged]))
	}
	if len(gains) == 0 {
		t.Errorf("no gain among the 16 edits of seed 7: the gain path went untested")
	}
}
