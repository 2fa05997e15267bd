package report

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate"
	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
)

// sharedEvaluation evaluates the bundled first part of the shared labelled
// sample, as evaluate does: the format read, both raters, the majority.
func sharedEvaluation(t *testing.T) *evaluate.Evaluation {
	t.Helper()
	dir := filepath.Join("..", "evaluate", "testdata", "shared-sample")
	s, err := sample.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var raters []sample.Rater
	for _, n := range []string{"A", "B"} {
		r, err := sample.ReadLabels(filepath.Join(dir, "labels-"+n+".jsonl"), nil)
		if err != nil {
			t.Fatal(err)
		}
		raters = append(raters, r)
	}
	ev, err := evaluate.Evaluate(s, raters, evaluate.Options{Seed: 3, Bootstrap: 300})
	if err != nil {
		t.Fatal(err)
	}
	// Through evaluation.json, as run --evaluation reads it.
	b, err := ev.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := evaluate.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// TestEvaluationSection holds "How good are these labels" in report.md and
// report.html, with the shared sample's evaluation and without one.
func TestEvaluationSection(t *testing.T) {
	ev := sharedEvaluation(t)
	for _, tc := range []struct {
		name string
		ev   *evaluate.Evaluation
	}{{"with", ev}, {"without", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			r := sampleReport(true)
			r.Evaluation = tc.ev
			var md bytes.Buffer
			if err := r.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			page := renderHTML(t, r)
			if !strings.Contains(md.String(), "## How good are these labels") || !strings.Contains(page, "<h2>How good are these labels</h2>") {
				t.Fatal("the section is missing")
			}
			if tc.ev == nil {
				if !strings.Contains(md.String(), "precision and recall have not been measured") || !strings.Contains(page, `id="evaluation-missing"`) {
					t.Error("without an evaluation the report does not say the counts are unmeasured")
				}
				if strings.Contains(page, "evaluation-chart") {
					t.Error("a chart without an evaluation")
				}
				return
			}
			if !strings.Contains(md.String(), ev.Table()) {
				t.Error("report.md lacks the evaluation table")
			}
			for _, c := range ev.Classes {
				row := "<td><code class=\"id\">" + c.Class + "</code></td><td class=\"n\">" + evaluate.PctInterval(c.Precision)
				if !strings.Contains(page, row) {
					t.Errorf("report.html lacks %s's row", c.Class)
				}
			}
			// The chart: well-formed SVG, one bar, whisker and dot per class.
			m := regexp.MustCompile(`(?s)<svg id="evaluation-chart".*?</svg>`).FindString(page)
			if m == "" {
				t.Fatal("no evaluation chart")
			}
			if err := xml.Unmarshal([]byte(m), new(struct{})); err != nil {
				t.Errorf("the chart is not well-formed: %v", err)
			}
			for _, class := range []string{`class="rule"`, `class="true-range"`, `class="true"`} {
				if n := strings.Count(m, class); n != len(ev.Classes) {
					t.Errorf("%d %s elements, want %d", n, class, len(ev.Classes))
				}
			}
			// Each whisker spans the true count's interval at the axis's scale:
			// where the interval passes the rule count, its end is right of
			// the bar's end, and the other way round.
			v := buildEvalView(r)
			for i, c := range ev.Classes {
				row := v.Rows[i]
				barEnd := chartBarX + parseCoord(t, row.BarW)
				high := parseCoord(t, row.HighX)
				if (c.TrueCount.High > c.RuleCount+1) != (high > barEnd) {
					t.Errorf("%s: true high %.0f vs rule %.0f, but whisker end %v vs bar end %v", c.Class, c.TrueCount.High, c.RuleCount, high, barEnd)
				}
				if !(parseCoord(t, row.LowX) <= parseCoord(t, row.TrueX) && parseCoord(t, row.TrueX) <= high) {
					t.Errorf("%s: the dot is outside its whisker", c.Class)
				}
			}
		})
	}
}

func parseCoord(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestEvaluationRendersInChromium loads a report with the evaluation
// section in headless Chromium: the page logs nothing to the console (an
// invalid SVG attribute of the chart would) and the chart is in the DOM.
func TestEvaluationRendersInChromium(t *testing.T) {
	needChromium(t)
	r := sampleReport(true)
	r.Evaluation = sharedEvaluation(t)
	res := runChromium(t, renderHTML(t, r))
	if len(res.console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(res.console, "\n"))
	}
	if !strings.Contains(res.dom, `id="evaluation-chart"`) || strings.Count(res.dom, `class="true-range"`) != 5 {
		t.Error("the rendered page lacks the evaluation chart's five whiskers")
	}
}
