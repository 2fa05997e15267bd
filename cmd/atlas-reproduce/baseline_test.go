package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// TestRunBaselineNextRelease runs a synth --next-of release with
// --baseline the run of the release before it: report.json's comparison
// equals what diff says of the two runs, and names exactly the seeded
// edits of edits.json (added, removed, changed, gained
// gg:credential-value); report.md and report.html list those tools.
func TestRunBaselineNextRelease(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	runA, runB := filepath.Join(dir, "run-a"), filepath.Join(dir, "run-b")
	for _, s := range [][]string{
		{"synth", "--tools", "3000", "--out", a, "--progress=false"},
		{"synth", "--next-of", a, "--out", b, "--edits", "16", "--seed", "7"},
		{"run", "--data", a, "--sha256sums", filepath.Join(a, "SHA256SUMS"), "--out", runA, "--release-date", "2026-11-01", "--progress=false"},
		{"run", "--data", b, "--sha256sums", filepath.Join(b, "SHA256SUMS"), "--out", runB, "--baseline", runA, "--release-id", "dec", "--release-date", "2026-12-01", "--progress=false"},
	} {
		if _, stderr, code := run(t, "", s...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", s, code, stderr)
		}
	}
	r, err := report.ReadFile(filepath.Join(runB, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Baseline == nil || r.Baseline.Diff.ToolChanges == nil {
		t.Fatal("report.json has no tool-level baseline comparison")
	}
	stdout, stderr, code := run(t, "", "diff", "--json", runA, runB)
	if code != 0 {
		t.Fatalf("diff: exit %d\n%s", code, stderr)
	}
	var d report.DiffResult
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	if d.Old.ReleaseID != "2026-11-01" || d.Old.ReleaseDate != "2026-11-01" || d.New.ReleaseID != "dec" || d.New.ReleaseDate != "2026-12-01" {
		t.Errorf("diff names the releases %+v and %+v", d.Old, d.New)
	}
	// Everything but the labels of the two sides is diff's.
	got := *r.Baseline.Diff
	got.Old.Label, got.New.Label = d.Old.Label, d.New.Label
	gj, _ := json.Marshal(got)
	dj, _ := json.Marshal(d)
	if string(gj) != string(dj) {
		t.Errorf("run --baseline's comparison is not diff's:\n%s\ndiff:\n%s", gj, dj)
	}

	edits, err := synth.ReadEdits(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	gains := 0
	for _, e := range edits {
		kind := e.Kind
		if kind == synth.EditGained {
			kind, gains = synth.EditChanged, gains+1
		}
		want[kind] = append(want[kind], e.ServerID+" "+e.Tool)
	}
	f := r.Baseline.Diff.ToolChanges
	md, _ := os.ReadFile(filepath.Join(runB, "report.md"))
	page, _ := os.ReadFile(filepath.Join(runB, "report.html"))
	for kind, rows := range map[string][]report.ToolChange{synth.EditAdded: f.Added, synth.EditRemoved: f.Removed, synth.EditChanged: f.Changed} {
		var ids []string
		for _, c := range rows {
			if c.Change.String() != kind {
				t.Errorf("a tool listed as %s is %s", kind, c.Change)
			}
			ids = append(ids, *c.ServerID+" "+*c.Tool)
			if !strings.Contains(string(md), "| `"+*c.ServerID+"` | `"+*c.Tool+"` |") {
				t.Errorf("report.md does not list %s %s", kind, ids[len(ids)-1])
			}
			if !strings.Contains(string(page), "<tr><td><code>"+*c.ServerID+"</code></td><td><code>"+*c.Tool+"</code></td>") {
				t.Errorf("report.html does not list %s %s", kind, ids[len(ids)-1])
			}
		}
		slices.Sort(ids)
		slices.Sort(want[kind])
		if !slices.Equal(ids, want[kind]) {
			t.Errorf("%s: report.json lists\n%v\nthe edits were\n%v", kind, ids, want[kind])
		}
	}
	tc := r.Baseline.Diff.Tools.ToolCounts
	if tc.Added != int64(len(want[synth.EditAdded])) || tc.Removed != int64(len(want[synth.EditRemoved])) || tc.Changed != int64(len(want[synth.EditChanged])) || tc.Unchanged+tc.Changed+tc.Added != r.Tools {
		t.Errorf("counts %+v of %d tools; edits %d added, %d removed, %d changed", *tc, r.Tools, len(want[synth.EditAdded]), len(want[synth.EditRemoved]), len(want[synth.EditChanged]))
	}
	if gains == 0 || r.Baseline.Diff.ClassesGained["gg:credential-value"] < int64(gains) {
		t.Errorf("%d tools given api_key; gg:credential-value gained by %d", gains, r.Baseline.Diff.ClassesGained["gg:credential-value"])
	}
	for _, w := range []string{"<section id=\"baseline\">", "<h3>Tools changed (first "} {
		if !strings.Contains(string(page), w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
}
