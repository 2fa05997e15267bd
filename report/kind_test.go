package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// truthOf is r's counts as a truth file would give them.
func truthOf(r *Report) *Truth {
	t := &Truth{Tools: r.Tools, Servers: r.Servers, Classes: map[string]TruthClass{}, Buckets: map[string]int64{}, Shapes: map[string]int64{}}
	for id, c := range r.Classes {
		t.Classes[id] = TruthClass{Tools: c.Tools, Required: c.Required}
	}
	for id, b := range r.Buckets {
		t.Buckets[id] = b.Tools
	}
	for k, n := range r.Shapes {
		t.Shapes[k] = n
	}
	return t
}

// kindReport is sampleReport judged as kind, with a truth (edited by
// edit) for a synthetic one.
func kindReport(kind string, edit func(*Truth)) *Report {
	r := sampleReport(true)
	r.Skipped = Skipped{First: []SkippedLine{}}
	r.Kind = kind
	r.Manifest = "SHA256SUMS"
	if kind == KindSynthetic {
		t := truthOf(r)
		if edit != nil {
			edit(t)
		}
		r.Truth = r.CheckTruth(t, "truth.json")
	}
	r.Judge(false)
	return r
}

// TestKinds: each kind's report says what it can earn, in report.md and
// report.html alike, and never a verdict it cannot.
func TestKinds(t *testing.T) {
	percentBar := regexp.MustCompile(`data-series="ours" data-percent="13\.884"`)
	for _, tc := range []struct {
		name          string
		r             *Report
		verdict       string
		earned        string // "" when Earned succeeds, else a part of its error
		md, html, not []string
	}{
		{
			name: "release", r: kindReport(KindRelease, nil), verdict: "", earned: "a release report has no verdict",
			md: []string{"# Census release report\n\nThis census release is not the published 2026-10-12 snapshot (its inputs were verified against `SHA256SUMS`, not the pinned hashes)",
				"| `gg:url-endpoint` | 31,870 | 13.884 | 22,880 | 9.968 | 13.889 | -0.005 |", "| Class | Tools (≥1 property) | % of live | ≥1 required | % of live (required) | Snapshot % | Δ pp |"},
			html: []string{"<title>Census release report</title>", `<section class="verdict info" id="verdict" data-kind="release">`, `<span class="word">No verdict</span>`, "<th>Δ pp</th>"},
			not:  []string{"REPRODUCED", "Δ tools", "Verdict:"},
		},
		{
			name: "synthetic, matching", r: kindReport(KindSynthetic, nil), verdict: VerdictMatchesTruth,
			md: []string{"# Synthetic census report\n\nVerdict: **MATCHES TRUTH**: every count equals the synthetic census's own ground truth (`truth.json`)",
				"| tools | 229,539 | 229,539 | equal |", "is not expected to match"},
			html: []string{"<title>Synthetic census report: MATCHES TRUTH</title>", `<section class="verdict ok" id="verdict" data-kind="synthetic">`, `<table id="truth">`},
			not:  []string{"REPRODUCED", "differs", "Δ tools"},
		},
		{
			name: "synthetic, differing", verdict: VerdictDiffersTruth, earned: "verdict DIFFERS FROM TRUTH: gg:money-amount tools 15,230, truth 15,231",
			r: kindReport(KindSynthetic, func(t *Truth) {
				c := t.Classes["gg:money-amount"]
				c.Tools++
				t.Classes["gg:money-amount"] = c
			}),
			md:   []string{"Verdict: **DIFFERS FROM TRUTH** (`truth.json`): gg:money-amount tools 15,230, truth 15,231.", "| `gg:money-amount` tools | 15,230 | 15,231 | **differs** |"},
			html: []string{`<section class="verdict bad" id="verdict" data-kind="synthetic">`, `<span class="badv">differs</span>`},
			not:  []string{"REPRODUCED"},
		},
		{
			name: "reproduction", r: func() *Report { r := sampleReport(true); r.Kind = KindReproduction; r.Judge(false); return r }(),
			verdict: VerdictNotReproduced, earned: "verdict NOT REPRODUCED",
			md:   []string{"# Census reproduction report\n\nVerdict: **NOT REPRODUCED**", "| `gg:url-endpoint` | 31,870 | 13.884 | 22,880 | 31,880 | 13.889 | 22,891 | -10 | -11 |"},
			html: []string{"<title>Census reproduction report: NOT REPRODUCED</title>", `data-value="31870"`},
			not:  []string{"Δ pp", "data-percent"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.r.Verdict != tc.verdict {
				t.Errorf("verdict %q, want %q (%v)", tc.r.Verdict, tc.verdict, tc.r.Differences)
			}
			if err := tc.r.Earned(); (err == nil) != (tc.earned == "") || (err != nil && !strings.Contains(err.Error(), tc.earned)) {
				t.Errorf("Earned() = %v, want %q", err, tc.earned)
			}
			var md bytes.Buffer
			if err := tc.r.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			page := renderHTML(t, tc.r)
			for _, want := range tc.md {
				if !strings.Contains(md.String(), want) {
					t.Errorf("report.md lacks %q", want)
				}
			}
			for _, want := range tc.html {
				if !strings.Contains(page, want) {
					t.Errorf("report.html lacks %q", want)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(md.String(), not) || strings.Contains(page, not) {
					t.Errorf("the report has %q", not)
				}
			}
			if tc.r.Kind != KindReproduction && !percentBar.MatchString(page) {
				t.Error("the chart is not in percent of live tools")
			}
		})
	}
}

// TestOldReportIsReproduction: a report.json from before kinds is read as
// a reproduction.
func TestOldReportIsReproduction(t *testing.T) {
	r, err := ReadJSON(strings.NewReader(`{"verdict": "NOT REPRODUCED", "classes": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.EffectiveKind() != KindReproduction || r.Title() != "Census reproduction report" {
		t.Errorf("kind %q title %q", r.EffectiveKind(), r.Title())
	}
}
