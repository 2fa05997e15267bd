package report

import (
	"bufio"
	"fmt"
	"html/template"
	"math"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate"
)

// EvaluationHowTo is what the report says when no evaluation was given: the
// counts are the rules' matches, and how to measure their precision.
const EvaluationHowTo = "These counts are lexical matches of the spec's rules; their precision and recall have not been " +
	"measured for this census. To measure them, draw a sample (`atlas-reproduce sample`), label it blind " +
	"(`atlas-reproduce label`), estimate (`atlas-reproduce evaluate`), and run again with " +
	"`--evaluation evaluation.json` (docs/evaluate.md)."

// writeEvaluationMarkdown writes "How good are these labels".
func (r *Report) writeEvaluationMarkdown(b *bufio.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## How good are these labels\n\n")
	ev := r.Evaluation
	if ev == nil {
		p("%s\n", EvaluationHowTo)
		return
	}
	p("Measured on a labelled sample of %d %s (%s design, %d labelled by %d rater(s)); counts in this section are %s of the sampled population, not this report's tools. An item carries a class when %s of its raters say so.\n\n",
		ev.Items, unitPlural(ev.Unit), ev.Design, ev.Labelled, len(ev.Raters), unitPlural(ev.Unit), ev.Agree)
	b.WriteString(ev.Table())
	p("\n%s\n", ev.Methods)
}

// unitPlural names many units of an evaluation: "properties" or "tools".
func unitPlural(unit string) string {
	if unit == "property" {
		return "properties"
	}
	return unit + "s"
}

// evalRow is one class of the evaluation chart: the rules' count as a bar,
// the estimated true count as a point with its interval as a whisker.
type evalRow struct {
	ID                    string
	LabelY, BarY          string
	BarW                  string
	TrueX, LowX, HighX    string
	WhiskerY              string
	RuleText, TrueText    string
	TextX, TextY          string
	Precision, Recall, F1 string
	Kappa                 string
	Rule                  string
}

// evalView is the section's HTML view.
type evalView struct {
	Ev            *evaluate.Evaluation
	HowTo         string
	Rows          []evalRow
	Width, Height int
	Ticks         []htmlTick
	AxisY         int
}

func buildEvalView(r *Report) evalView {
	v := evalView{Ev: r.Evaluation, HowTo: EvaluationHowTo}
	if r.Evaluation == nil {
		return v
	}
	var top float64
	for _, c := range r.Evaluation.Classes {
		top = math.Max(top, math.Max(c.RuleCount, c.TrueCount.High))
	}
	axis := newChartAxis(int64(math.Ceil(top)))
	w := func(x float64) float64 {
		if math.IsNaN(x) {
			return 0
		}
		return axis.width(int64(math.Round(x)))
	}
	const rowH, barH = 44, 16
	y := chartTop
	for _, c := range r.Evaluation.Classes {
		rw := evalRow{ID: c.Class, Precision: evaluate.PctInterval(c.Precision), Recall: evaluate.PctInterval(c.Recall),
			F1: evaluate.PctInterval(c.F1), TrueText: evaluate.CountInterval(c.TrueCount), Rule: fmt.Sprintf("%.0f", c.RuleCount)}
		rw.Kappa = "n/a"
		if k := float64(c.Kappa); !math.IsNaN(k) {
			rw.Kappa = fmt.Sprintf("%.2f", k)
		}
		rw.LabelY = chartCoord(float64(y) + barH - 3)
		rw.BarY = chartCoord(float64(y))
		rw.BarW = chartCoord(w(c.RuleCount))
		rw.WhiskerY = chartCoord(float64(y) + barH + 6)
		rw.TrueX = chartCoord(chartBarX + w(c.TrueCount.Estimate))
		rw.LowX = chartCoord(chartBarX + w(c.TrueCount.Low))
		rw.HighX = chartCoord(chartBarX + w(c.TrueCount.High))
		rw.RuleText = fmt.Sprintf("rules %s, true %s", rw.Rule, rw.TrueText)
		rw.TextX = chartCoord(chartBarX + math.Max(w(c.RuleCount), w(c.TrueCount.High)) + 8)
		rw.TextY = rw.LabelY
		v.Rows = append(v.Rows, rw)
		y += rowH
	}
	v.AxisY = y + 4
	v.Ticks = axis.ticks(group)
	v.Width, v.Height = chartWidth, y+chartAxisH
	return v
}

func init() {
	htmlTemplate.Funcs(template.FuncMap{"evalView": buildEvalView, "unitPlural": unitPlural})
	template.Must(htmlTemplate.New("evaluation").Parse(evaluationHTML))
}

// evaluationHTML is the section after the sensitivity analyses: the table,
// and a chart of each class's rule count (bar) beside its estimated true
// count (dot) and 95% interval (whisker).
const evaluationHTML = `{{with evalView .R}}<section id="evaluation">
<h2>How good are these labels</h2>
{{if not .Ev}}<p class="warnv" id="evaluation-missing">{{.HowTo}}</p>
{{else}}<p class="note">Measured on a labelled sample of {{.Ev.Items}} {{unitPlural .Ev.Unit}} ({{.Ev.Design}} design, {{.Ev.Labelled}} labelled by {{len .Ev.Raters}} rater(s), {{.Ev.Agree}} agreement); counts in this section are {{unitPlural .Ev.Unit}} of the sampled population, not this report's tools.</p>
<table id="evaluation-table">
<thead><tr><th>Class</th><th>Precision</th><th>Recall</th><th>F1</th><th>Rule count</th><th>Estimated true count</th><th>Kappa</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td><code class="id">{{.ID}}</code></td><td class="n">{{.Precision}}</td><td class="n">{{.Recall}}</td><td class="n">{{.F1}}</td><td class="n">{{.Rule}}</td><td class="n">{{.TrueText}}</td><td class="n">{{.Kappa}}</td></tr>
{{end}}</tbody>
</table>
<p class="note">Blue bar: the rules' count. Brown dot and line: the estimated number that truly carry the class, with its 95% interval.</p>
<svg id="evaluation-chart" class="chart" role="img" aria-labelledby="evaluation-chart-title" xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
<title id="evaluation-chart-title">Each class's rule count (bar) and its estimated true count with 95% interval (dot and whisker)</title>
{{$axis := .AxisY}}{{range .Ticks}}<line x1="{{.X}}" y1="30" x2="{{.X}}" y2="{{$axis}}" stroke="#d0d7de"/><text x="{{.X}}" y="{{$axis}}" dy="14" text-anchor="middle" font-size="11">{{.Label}}</text>
{{end}}{{range .Rows}}<text x="190" y="{{.LabelY}}" text-anchor="end" font-size="12" font-family="monospace">{{.ID}}</text>
<rect class="rule" x="200" y="{{.BarY}}" width="{{.BarW}}" height="16" fill="#6b9bd1"/>
<line class="true-range" x1="{{.LowX}}" y1="{{.WhiskerY}}" x2="{{.HighX}}" y2="{{.WhiskerY}}" stroke="#a65a00" stroke-width="2"/>
<circle class="true" cx="{{.TrueX}}" cy="{{.WhiskerY}}" r="4" fill="#a65a00"/>
<text x="{{.TextX}}" y="{{.TextY}}" font-size="11">{{.RuleText}}</text>
{{end}}</svg>
<p class="note">{{.Ev.Methods}}</p>
{{end}}</section>
{{end}}`
