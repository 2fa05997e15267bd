package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// truthOf writes r's counts as synth's truth.json would give them, with
// edit applied.
func truthOf(t *testing.T, r *report.Report, path string, edit func(*report.Truth)) {
	t.Helper()
	tr := &report.Truth{Tools: r.Tools, Servers: r.Servers, Classes: map[string]report.TruthClass{}, Buckets: map[string]int64{}, Shapes: r.Shapes}
	for id, c := range r.Classes {
		tr.Classes[id] = report.TruthClass{Tools: c.Tools, Required: c.Required}
	}
	for id, b := range r.Buckets {
		tr.Buckets[id] = b.Tools
	}
	if edit != nil {
		edit(tr)
	}
	b, _ := json.Marshal(tr)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReportKinds: the kind, and so the verdict, follows what the inputs
// claim to be.
func TestReportKinds(t *testing.T) {
	data, sums := smallCensus(t, 400)
	m, err := hashverify.ReadSHA256Sums(sums)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Run(context.Background(), Options{Data: data, Out: t.TempDir(), Manifest: m, ManifestName: "SHA256SUMS", Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "other-truth.json")
	truthOf(t, first, elsewhere, nil)
	for _, tc := range []struct {
		name      string
		truth     func(dir string) // writes truth.json beside the data, or nothing
		opt       Options
		kind      string
		verdict   string
		title     string
		mdHas     []string
		mdHasNot  []string
		diffNamed string
	}{
		{name: "own sums: a release", opt: Options{Manifest: m, ManifestName: "SHA256SUMS"},
			kind: report.KindRelease, verdict: "", title: "# Census release report",
			mdHas: []string{"not the published 2026-10-12 snapshot", "verified against `SHA256SUMS`", "Snapshot % | Δ pp"}, mdHasNot: []string{"REPRODUCED", "Δ tools"}},
		{name: "truth beside the data: synthetic, matching",
			truth: func(dir string) { truthOf(t, first, filepath.Join(dir, TruthName), nil) },
			opt:   Options{Manifest: m, ManifestName: "SHA256SUMS"}, kind: report.KindSynthetic, verdict: report.VerdictMatchesTruth,
			title: "# Synthetic census report", mdHas: []string{"Verdict: **MATCHES TRUTH**", "own ground truth (`truth.json`)", "is not expected to match"},
			mdHasNot: []string{"REPRODUCED", "**differs**"}},
		{name: "truth that differs",
			truth: func(dir string) {
				truthOf(t, first, filepath.Join(dir, TruthName), func(tr *report.Truth) {
					c := tr.Classes["gg:money-amount"]
					c.Required++
					tr.Classes["gg:money-amount"] = c
				})
			},
			opt: Options{Manifest: m, ManifestName: "SHA256SUMS"}, kind: report.KindSynthetic, verdict: report.VerdictDiffersTruth,
			title: "# Synthetic census report", mdHas: []string{"**differs**"}, diffNamed: "gg:money-amount required"},
		{name: "--truth FILE", opt: Options{Manifest: m, ManifestName: "SHA256SUMS", TruthFile: elsewhere},
			kind: report.KindSynthetic, verdict: report.VerdictMatchesTruth, title: "# Synthetic census report", mdHas: []string{"(`other-truth.json`)"}},
		{name: "no hashes checked: a reproduction, unverified", opt: Options{NoVerify: true},
			kind: report.KindReproduction, verdict: report.VerdictUnverified, title: "# Census reproduction report",
			mdHas: []string{"Verdict: **UNVERIFIED**", "Δ tools"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range append([]string{"SHA256SUMS"}, hashverify.SnapshotFiles()...) {
				if err := os.Symlink(filepath.Join(data, name), filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.truth != nil {
				tc.truth(dir)
			}
			opt := tc.opt
			opt.Data, opt.Out, opt.Workers = dir, t.TempDir(), 2
			r, err := Run(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != tc.kind || r.Verdict != tc.verdict {
				t.Errorf("kind %q verdict %q, want %q %q", r.Kind, r.Verdict, tc.kind, tc.verdict)
			}
			if tc.diffNamed != "" && !strings.Contains(strings.Join(r.Differences, "; "), tc.diffNamed) {
				t.Errorf("differences %q do not name %q", r.Differences, tc.diffNamed)
			}
			md, _ := os.ReadFile(filepath.Join(opt.Out, "report.md"))
			if !strings.HasPrefix(string(md), tc.title) {
				t.Errorf("report.md starts %.60q, want %q", md, tc.title)
			}
			for _, want := range tc.mdHas {
				if !strings.Contains(string(md), want) {
					t.Errorf("report.md lacks %q", want)
				}
			}
			for _, not := range tc.mdHasNot {
				if strings.Contains(string(md), not) {
					t.Errorf("report.md has %q", not)
				}
			}
			js, _ := os.ReadFile(filepath.Join(opt.Out, "report.json"))
			if !strings.Contains(string(js), `"kind": "`+tc.kind+`"`) {
				t.Errorf("report.json lacks its kind %q", tc.kind)
			}
		})
	}
}

// TestBaseline sets a release beside a previous run: a run of the same
// data beside itself changes no tool; the report says so, class by class
// and tool by tool.
func TestBaseline(t *testing.T) {
	data, sums := smallCensus(t, 300)
	m, err := hashverify.ReadSHA256Sums(sums)
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	if _, err := Run(context.Background(), Options{Data: data, Out: base, Manifest: m, ManifestName: "SHA256SUMS", Workers: 2}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	r, err := Run(context.Background(), Options{Data: data, Out: out, Manifest: m, ManifestName: "SHA256SUMS", Workers: 2, Baseline: base})
	if err != nil {
		t.Fatal(err)
	}
	if r.Baseline == nil || r.Baseline.Diff.Tools.ToolCounts == nil {
		t.Fatal("no baseline comparison in the report")
	}
	tc := r.Baseline.Diff.Tools.ToolCounts
	if tc.Unchanged != r.Tools || tc.Added+tc.Removed+tc.Changed != 0 {
		t.Errorf("the same data beside itself: %+v, want %d unchanged", *tc, r.Tools)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"## Beside the baseline run", "### Parameter risk classes", "### Tools, one by one", "| Tools unchanged | "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if !strings.Contains(string(page), `<section id="baseline">`) {
		t.Error("report.html has no baseline section")
	}
	// A baseline folder without a run is named.
	if _, err := Run(context.Background(), Options{Data: data, Out: t.TempDir(), Manifest: m, Workers: 2, Baseline: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "--baseline") {
		t.Errorf("empty baseline: %v", err)
	}
}
