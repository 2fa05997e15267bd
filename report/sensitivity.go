package report

import (
	"bufio"
	"fmt"
	"html/template"
	"math"

	"github.com/atlas-reproduce/atlas-reproduce/aggregate"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// The sensitivity analyses: what three variants of the lexical rule would
// add to each class (package sensitivity). They are non-normative, reported
// apart from the class table, and change no normative count.

// sensitivityDefinitions says what each variant is, one line each, in the
// words report.md and report.html print.
var sensitivityDefinitions = []struct{ ID, Text string }{
	{"camel_case", "the normative properties with each name rewritten as a snake_case author would write it: Python `re.sub(r'(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])', '_', name)` before lower-casing (privateKey → private_Key, webhookURL → webhook_URL); descriptions unchanged."},
	{"word_split", "the same boundaries replaced by a space, and every `_`, `-` and `.` by a space (access_token → access token, outputPath → output Path). Recall-oriented: it over-counts by design (total_results → total results counts as money)."},
	{"deep", "the names and descriptions of every entry of every `properties` object anywhere in the input schema, through properties, patternProperties, $defs, definitions, additionalProperties, items, not, if/then/else, prefixItems, anyOf, oneOf and allOf; the root is depth 0, a schema under a keyword one deeper, a node deeper than 64 is not read; `$ref` is not followed."},
}

// SensitivityWorkedExample is the figures on the 5,606 real tool schemas
// bundled with the tests (testdata/real-mcp-tools), as a scale for reading
// a run's: a test recomputes them.
const SensitivityWorkedExample = "on the 5,606 real tool schemas bundled with the tests, word_split adds the most to gg:filesystem-path " +
	"(+150 tools to 421, +35.63%; 101 through a required property), then gg:credential-value (+73 to 252); " +
	"camel_case adds only gg:credential-value (+9: all from privateKey, which becomes private_Key); deep adds 43 tools to gg:url-endpoint (+11.75%) " +
	"and 13 to 28 to each other class."

// SensitivityAdded is what camel_case or word_split adds to one class.
type SensitivityAdded struct {
	// Tools the variant gives the class that their normative properties do
	// not; Required those of them where a required property carries it.
	Tools    int64 `json:"tools"`
	Required int64 `json:"required"`
	// Percent is Tools of all tools; PercentOfClass of the class's
	// normative count (the relative growth).
	Percent        float64 `json:"percent"`
	PercentOfClass float64 `json:"percent_of_class"`
}

// SensitivityDeep is what deep adds to one class.
type SensitivityDeep struct {
	Tools          int64   `json:"tools"`
	Percent        float64 `json:"percent"`
	PercentOfClass float64 `json:"percent_of_class"`
}

// Sensitivity is the report's "sensitivity" object: per variant, class id →
// what it adds. NonNormative is always true.
type Sensitivity struct {
	NonNormative bool                        `json:"non_normative"`
	CamelCase    map[string]SensitivityAdded `json:"camel_case"`
	WordSplit    map[string]SensitivityAdded `json:"word_split"`
	Deep         map[string]SensitivityDeep  `json:"deep"`
}

// NewSensitivity sets the counts beside r's normative classes (r.Tools and
// r.Classes must be filled).
func NewSensitivity(r *Report, c *aggregate.Sensitivity) *Sensitivity {
	s := &Sensitivity{
		NonNormative: true,
		CamelCase:    map[string]SensitivityAdded{},
		WordSplit:    map[string]SensitivityAdded{},
		Deep:         map[string]SensitivityDeep{},
	}
	for i := range 5 {
		id := (classify.Set(1) << i).ID()
		norm := r.Classes[id].Tools
		for v, m := range []map[string]SensitivityAdded{s.CamelCase, s.WordSplit} {
			n := c.Tools[v][i]
			m[id] = SensitivityAdded{Tools: n, Required: c.Required[v][i], Percent: Percent(n, r.Tools), PercentOfClass: growth(n, norm)}
		}
		n := c.Tools[2][i]
		s.Deep[id] = SensitivityDeep{Tools: n, Percent: Percent(n, r.Tools), PercentOfClass: growth(n, norm)}
	}
	return s
}

// growth is n as a percentage of the normative count norm, to two decimals
// (0 when the class is empty).
func growth(n, norm int64) float64 {
	if norm == 0 {
		return 0
	}
	return math.Round(float64(n)*10000/float64(norm)) / 100
}

// variantAdded returns what variant v (0 camel_case, 1 word_split, 2 deep)
// adds to class id.
func (s *Sensitivity) variantAdded(v int, id string) (tools, required int64, pct float64, hasRequired bool) {
	switch v {
	case 0:
		a := s.CamelCase[id]
		return a.Tools, a.Required, a.PercentOfClass, true
	case 1:
		a := s.WordSplit[id]
		return a.Tools, a.Required, a.PercentOfClass, true
	}
	a := s.Deep[id]
	return a.Tools, 0, a.PercentOfClass, false
}

// writeSensitivityMarkdown writes the section after the class table.
func (r *Report) writeSensitivityMarkdown(b *bufio.Writer) {
	s := r.Sensitivity
	if s == nil {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Sensitivity of the lexical rule (non-normative)\n\n")
	p("What three variants of the rule would add to each class: tools a variant labels with the class that the normative rule does not. ")
	p("Not part of the spec, and no normative count above changes. %% is of the class's normative count. ")
	p("**word_split over-counts by design**: it is an upper bound on what delimiter-free names hide, not an estimate.\n\n")
	p("| Class | Normative tools | camel_case adds | of them required | word_split adds | of them required | deep adds |\n")
	p("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, id := range r.ClassOrder {
		p("| `%s` | %s", id, group(r.Classes[id].Tools))
		for v := range 3 {
			n, req, pct, hasReq := s.variantAdded(v, id)
			p(" | +%s (+%.2f%%)", group(n), pct)
			if hasReq {
				p(" | +%s", group(req))
			}
		}
		p(" |\n")
	}
	p("\n")
	for _, d := range sensitivityDefinitions {
		p("- **%s**: %s\n", d.ID, d.Text)
	}
	p("\nWorked example: %s\n", SensitivityWorkedExample)
}

// Chart geometry of the sensitivity chart: per class, one bar per variant,
// the normative count in grey and what the variant adds in its colour.
const (
	sensRowH = 78
	sensBarH = 18
	sensTop  = 40
)

var sensColours = [3]string{"#2a9d8f", "#e76f51", "#7b5ea7"}

const sensColourBase = "#b8c0c8"

type htmlSensBar struct {
	Variant              string
	Y, BaseW, AddX, AddW string
	TextX, TextY         string
	Fill                 string
	Base, Added          int64
	Text                 string
}

type htmlSensRow struct {
	ID     string
	LabelY string
	Bars   []htmlSensBar
}

type htmlSensView struct {
	Width, Height       int
	LabelX, BarX        int
	Rows                []htmlSensRow
	Ticks               []htmlTick
	GridTop, GridBottom int
	AxisLabelY          int
	Legend              []htmlLegend
	Table               []htmlSensTableRow
	Definitions         []struct{ ID, Text string }
	WorkedExample       string
}

type htmlSensTableRow struct {
	ID        string
	Normative int64
	Cells     []htmlSensCell
}

type htmlSensCell struct {
	Tools, Required int64
	Pct             float64
	HasRequired     bool
}

// buildSensitivityView lays out the HTML section; nil when the report has
// no sensitivity figures.
func buildSensitivityView(r *Report) *htmlSensView {
	s := r.Sensitivity
	if s == nil {
		return nil
	}
	ids := htmlClassOrder(r)
	v := &htmlSensView{Width: chartWidth, LabelX: chartLabelW, BarX: chartBarX, Definitions: sensitivityDefinitions, WorkedExample: SensitivityWorkedExample}
	v.Height = sensTop + len(ids)*sensRowH + chartAxisH
	v.GridTop, v.GridBottom = sensTop-6, sensTop+len(ids)*sensRowH
	v.AxisLabelY = v.GridBottom + 18
	var largest int64 = 1
	for _, id := range ids {
		for k := range 3 {
			n, _, _, _ := s.variantAdded(k, id)
			largest = max(largest, r.Classes[id].Tools+max(n, 0))
		}
	}
	axis := newChartAxis(largest)
	v.Ticks = axis.ticks(group)
	scale, f := axis.width, chartCoord
	for i, id := range ids {
		norm := r.Classes[id].Tools
		y := float64(sensTop + i*sensRowH)
		row := htmlSensRow{ID: id, LabelY: f(y + 6 + 1.5*sensBarH + 6)}
		cells := htmlSensTableRow{ID: id, Normative: norm}
		for k, variant := range []string{"camel_case", "word_split", "deep"} {
			n, req, pct, hasReq := s.variantAdded(k, id)
			yy := y + 6 + float64(k)*(sensBarH+4)
			row.Bars = append(row.Bars, htmlSensBar{
				Variant: variant, Y: f(yy), BaseW: f(scale(norm)), AddX: f(chartBarX + scale(norm)), AddW: f(scale(n)),
				TextX: f(chartBarX + scale(norm) + scale(n) + 6), TextY: f(yy + 13), Fill: sensColours[k],
				Base: norm, Added: n, Text: fmt.Sprintf("%s +%s (+%.2f%%)", variant, group(n), pct),
			})
			cells.Cells = append(cells.Cells, htmlSensCell{Tools: n, Required: req, Pct: pct, HasRequired: hasReq})
		}
		v.Rows = append(v.Rows, row)
		v.Table = append(v.Table, cells)
	}
	legend := []legendEntry{{"normative", sensColourBase, "normative count"}}
	for k, variant := range []string{"camel_case", "word_split", "deep"} {
		legend = append(legend, legendEntry{variant, sensColours[k], variant + " adds"})
	}
	v.Legend = chartLegend(160, legend)
	return v
}

func init() {
	htmlTemplate.Funcs(template.FuncMap{"sensitivityView": buildSensitivityView})
	template.Must(htmlTemplate.New("sensitivity").Parse(sensitivityHTML))
}

// sensitivityHTML is the section after the class table; the page's
// Content-Security-Policy allows inline SVG and CSS only, as here.
const sensitivityHTML = `{{with sensitivityView .R}}
<section class="nonnormative" id="sensitivity">
<h2>Sensitivity of the lexical rule <span class="badge">non-normative</span></h2>
<p class="note">What three variants of the rule would add to each class: tools a variant labels with the class that the normative rule does not. Not part of the spec; no normative count changes. Grey is the normative count, the coloured part what the variant adds; % is of the normative count.</p>
<p class="warnv">word_split over-counts by design: read it as an upper bound on what delimiter-free names hide, not as an estimate.</p>
<svg id="sensitivity-chart" class="chart" role="img" aria-labelledby="sensitivity-chart-title" xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
<title id="sensitivity-chart-title">Tools per class: the normative count and what camel_case, word_split and deep would add</title>
<rect x="0" y="0" width="{{.Width}}" height="{{.Height}}" fill="#ffffff"/>
{{range .Legend}}<rect x="{{.X}}" y="{{.SwatchY}}" width="14" height="14" fill="{{.Fill}}" data-legend="{{.Series}}"/><text x="{{.TextX}}" y="{{.TxY}}">{{.Label}}</text>
{{end}}{{$c := .}}{{range .Ticks}}<line class="grid" x1="{{.X}}" x2="{{.X}}" y1="{{$c.GridTop}}" y2="{{$c.GridBottom}}"/><text class="tick" x="{{.X}}" y="{{$c.AxisLabelY}}" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Rows}}<g data-sensitivity-class="{{.ID}}">
<text x="{{$c.LabelX}}" y="{{.LabelY}}" text-anchor="end">{{.ID}}</text>
{{range .Bars}}<rect x="{{$c.BarX}}" y="{{.Y}}" width="{{.BaseW}}" height="18" fill="#b8c0c8" data-variant="normative" data-value="{{.Base}}"><title>normative: {{num .Base}}</title></rect><rect x="{{.AddX}}" y="{{.Y}}" width="{{.AddW}}" height="18" fill="{{.Fill}}" data-variant="{{.Variant}}" data-value="{{.Added}}"><title>{{.Variant}} adds {{num .Added}}</title></rect><text x="{{.TextX}}" y="{{.TextY}}">{{.Text}}</text>
{{end}}</g>
{{end}}</svg>
<table id="sensitivity-table">
<thead><tr><th>Class</th><th>Normative tools</th><th>camel_case adds</th><th>of them required</th><th>word_split adds</th><th>of them required</th><th>deep adds</th></tr></thead>
<tbody>
{{range .Table}}<tr><td><code class="id">{{.ID}}</code></td><td class="n">{{num .Normative}}</td>{{range .Cells}}<td class="n">+{{num .Tools}} (+{{printf "%.2f" .Pct}}%)</td>{{if .HasRequired}}<td class="n">+{{num .Required}}</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
{{range .Definitions}}<p class="rule"><strong>{{.ID}}</strong>: {{codeSpans .Text}}</p>
{{end}}<p class="note">Worked example: {{.WorkedExample}}</p>
</section>
{{end}}`
