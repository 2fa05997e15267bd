package report

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Chart geometry, in SVG user units (CSS pixels at the natural size). The
// chart is drawn at a fixed size so that it reads the same in every browser
// and in print; CSS only lets it shrink to narrow windows.
const (
	chartWidth   = 1000
	chartLabelW  = 190 // class ids, right-aligned before the bars
	chartBarX    = 200
	chartBarMaxW = 560 // leaves room for the value text after the longest bar
	chartTop     = 40  // the legend
	chartRowH    = 64
	chartBarH    = 20
	chartAxisH   = 28
)

// Bar colours: a light shade for all tools and a dark one for the part with
// a required labelled property, blue for our count and orange for the
// published one.
const (
	colourOurs              = "#6b9bd1"
	colourOursRequired      = "#1d4e89"
	colourPublished         = "#f2a541"
	colourPublishedRequired = "#a65a00"
)

type htmlBar struct {
	Series, Fill string
	X, Y, W, H   string
	Value        int64
	// Percent is set, formatted, on a chart in percent of live tools
	// (a release's or a synthetic census's); Value is then unused.
	Percent string
}

type htmlChartRow struct {
	ID                  string
	LabelY              string
	Bars                []htmlBar
	OursText, PubText   string
	OursTextX, PubTextX string
	OursTextY, PubTextY string
}

type htmlTick struct {
	X, Label string
}

type htmlChart struct {
	Width, Height       int
	LabelX              int
	Rows                []htmlChartRow
	Ticks               []htmlTick
	GridTop, GridBottom int
	AxisLabelY          int
	Legend              []htmlLegend
}

type htmlLegend struct {
	X, TextX     int
	Fill, Label  string
	Series       string
	SwatchY, TxY int
}

type htmlClassRow struct {
	ID string
	Class
}

type htmlBucketRow struct {
	ID string
	Bucket
}

type htmlTruthRow struct {
	What          string
	Ours, Truth   int64
	Differs, Code bool
}

type htmlShape struct {
	Name  string
	Count int64
}

type htmlView struct {
	R            *Report
	Kind         string
	VerdictClass string
	// ChartInPercent is true for a release or a synthetic census: its bars
	// are percentages of live tools, beside the snapshot's.
	ChartInPercent bool
	Truth          []htmlTruthRow
	Published      struct{ Tools, Servers int64 }
	Chart          htmlChart
	Classes        []htmlClassRow
	Buckets        []htmlBucketRow
	Shapes         []htmlShape
}

// WriteHTML writes report.html: one self-contained page (inline CSS and SVG,
// no script, no external resource; a Content-Security-Policy forbids any)
// with the verdict first, our counts beside the published ones as a chart
// and as tables, the inputs and their hashes, and the non-normative figures
// marked as such.
func (r *Report) WriteHTML(w io.Writer) error {
	v := htmlView{R: r, Kind: r.EffectiveKind()}
	v.ChartInPercent = v.Kind != KindReproduction
	v.Chart = buildChart(r, v.ChartInPercent)
	v.Published.Tools, v.Published.Servers = published.Tools, published.Servers
	switch {
	case v.Kind == KindRelease && r.Deposit != nil && r.Deposit.Verdict == VerdictReproduced:
		v.VerdictClass = "ok"
	case v.Kind == KindRelease && r.Deposit != nil && r.Deposit.Verdict != "":
		v.VerdictClass = "bad"
	case v.Kind == KindRelease:
		v.VerdictClass = "info"
	case v.Kind == KindSynthetic && r.Verdict == VerdictMatchesTruth:
		v.VerdictClass = "ok"
	case !r.Verified || r.Verdict == VerdictUnverified:
		v.VerdictClass = "warn"
	case r.Verdict == VerdictReproduced:
		v.VerdictClass = "ok"
	default:
		v.VerdictClass = "bad"
	}
	if t := r.Truth; t != nil {
		row := func(what string, code bool, ours, truth int64) {
			v.Truth = append(v.Truth, htmlTruthRow{What: what, Code: code, Ours: ours, Truth: truth, Differs: ours != truth})
		}
		row("tools", false, r.Tools, t.Truth.Tools)
		row("servers", false, r.Servers, t.Truth.Servers)
		for _, id := range htmlClassOrder(r) {
			row(id+" tools", true, r.Classes[id].Tools, t.Truth.Classes[id].Tools)
			row(id+" ≥1 required", true, r.Classes[id].Required, t.Truth.Classes[id].Required)
		}
		for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
			row(id+" (bucket)", true, r.Buckets[id].Tools, t.Truth.Buckets[id])
		}
		for _, k := range slices.Sorted(maps.Keys(union(r.Shapes, t.Truth.Shapes))) {
			row("records of shape "+k, false, r.Shapes[k], t.Truth.Shapes[k])
		}
	}
	for _, id := range htmlClassOrder(r) {
		v.Classes = append(v.Classes, htmlClassRow{id, r.Classes[id]})
	}
	for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
		v.Buckets = append(v.Buckets, htmlBucketRow{id, r.Buckets[id]})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Shapes)) {
		v.Shapes = append(v.Shapes, htmlShape{k, r.Shapes[k]})
	}
	return htmlTemplate.Execute(w, &v)
}

// htmlClassOrder is the report's class order, or the published one for a
// report that records none.
func htmlClassOrder(r *Report) []string {
	if len(r.ClassOrder) > 0 {
		return r.ClassOrder
	}
	return ClassOrder()
}

// buildChart draws the classes as bars: counts beside the published counts
// for a reproduction; with inPercent, percentages of each census's live
// tools (this one's beside the snapshot's), since a release's counts are
// not on the snapshot's scale.
func buildChart(r *Report, inPercent bool) htmlChart {
	ids := htmlClassOrder(r)
	vals := make([]classBars, len(ids))
	if inPercent {
		// In thousandths of a percent, so that the count chart's
		// geometry serves.
		milli := func(x float64) int64 { return int64(math.Round(x * 1000)) }
		for i, id := range ids {
			cl := r.Classes[id]
			vals[i] = classBars{milli(cl.Percent), milli(Percent(cl.Required, r.Tools)), milli(cl.Published.Percent), milli(Percent(cl.Published.Required, published.Tools))}
		}
		pct := func(m int64) string { return strconv.FormatFloat(float64(m)/1000, 'f', -1, 64) + "%" }
		return drawClassChart(ids, vals, chartUnits{
			number: pct,
			mark: func(b *htmlBar, n int64) {
				b.Percent = strconv.FormatFloat(float64(n)/1000, 'f', 3, 64)
			},
			ours: "this census", published: "snapshot",
			legend:    [4]string{"this census: % of tools", "≥1 required", "snapshot " + published.Snapshot + ": %", "snapshot: ≥1 required"},
			legendGap: 190,
		})
	}
	for i, id := range ids {
		cl := r.Classes[id]
		vals[i] = classBars{cl.Tools, cl.Required, cl.Published.Tools, cl.Published.Required}
	}
	return drawClassChart(ids, vals, chartUnits{
		number: group,
		mark:   func(b *htmlBar, n int64) { b.Value = n },
		ours:   "ours", published: "published",
		legend:    [4]string{"ours: tools", "ours: ≥1 required", "published: tools", "published: ≥1 required"},
		legendGap: 180,
	})
}

// classBars are one class's four bars in the chart's unit: ours and the
// published figure, each with the part where a property is required.
type classBars struct{ ours, oursReq, pub, pubReq int64 }

// chartUnits is what tells the count chart from the percent chart.
type chartUnits struct {
	number          func(int64) string    // a tick's or a bar text's figure
	mark            func(*htmlBar, int64) // puts a bar's figure where the template reads it
	ours, published string                // the bar texts' names of the two censuses
	legend          [4]string             // the labels of the four series
	legendGap       int
}

// drawClassChart lays out the class chart of vals, one row a class of ids.
func drawClassChart(ids []string, vals []classBars, u chartUnits) htmlChart {
	c := htmlChart{Width: chartWidth, Height: chartTop + len(ids)*chartRowH + chartAxisH, LabelX: chartLabelW}
	c.GridTop, c.GridBottom = chartTop-6, chartTop+len(ids)*chartRowH
	c.AxisLabelY = c.GridBottom + 18
	var largest int64 = 1
	for _, v := range vals {
		largest = max(largest, v.ours, v.pub)
	}
	axis := newChartAxis(largest)
	c.Ticks = axis.ticks(u.number)
	f := chartCoord
	for i, id := range ids {
		v := vals[i]
		y := float64(chartTop + i*chartRowH)
		oursY, pubY := y+6, y+6+chartBarH+4
		row := htmlChartRow{ID: id, LabelY: f(y + 6 + chartBarH + 2)}
		bar := func(series, fill string, yy float64, n int64) htmlBar {
			b := htmlBar{Series: series, Fill: fill, X: f(chartBarX), Y: f(yy), W: f(axis.width(n)), H: f(chartBarH)}
			u.mark(&b, n)
			return b
		}
		row.Bars = []htmlBar{
			bar("ours", colourOurs, oursY, v.ours),
			bar("ours-required", colourOursRequired, oursY, v.oursReq),
			bar("published", colourPublished, pubY, v.pub),
			bar("published-required", colourPublishedRequired, pubY, v.pubReq),
		}
		row.OursText = fmt.Sprintf("%s %s (%s required)", u.ours, u.number(v.ours), u.number(v.oursReq))
		row.PubText = fmt.Sprintf("%s %s (%s required)", u.published, u.number(v.pub), u.number(v.pubReq))
		row.OursTextX, row.OursTextY = f(chartBarX+axis.width(v.ours)+6), f(oursY+14)
		row.PubTextX, row.PubTextY = f(chartBarX+axis.width(v.pub)+6), f(pubY+14)
		c.Rows = append(c.Rows, row)
		// The text after the longest bar must end inside the picture:
		// widen the viewBox to the text's estimated end.
		for _, t := range []struct {
			x    float64
			text string
		}{{chartBarX + axis.width(v.ours) + 6, row.OursText}, {chartBarX + axis.width(v.pub) + 6, row.PubText}} {
			c.Width = max(c.Width, int(math.Ceil(t.x+textWidth(t.text)))+chartTextPad)
		}
	}
	c.Legend = chartLegend(u.legendGap, []legendEntry{
		{"ours", colourOurs, u.legend[0]},
		{"ours-required", colourOursRequired, u.legend[1]},
		{"published", colourPublished, u.legend[2]},
		{"published-required", colourPublishedRequired, u.legend[3]},
	})
	return c
}

// chartCharW is a generous width of one character of the chart's 13px
// sans-serif text: the widest digits and lower-case letters of common
// system fonts stay under it, so an estimate from it never falls short.
const (
	chartCharW   = 8.0
	chartTextPad = 8
)

// textWidth estimates the drawn width of s in the chart's text.
func textWidth(s string) float64 { return float64(utf8.RuneCountInString(s)) * chartCharW }

// chartAxis maps figures from 0 to top, a whole number of gridline steps,
// onto the bars' width.
type chartAxis struct{ top, step int64 }

// newChartAxis is the axis of a chart whose largest figure is largest.
func newChartAxis(largest int64) chartAxis {
	step := niceStep(largest)
	return chartAxis{top: (largest + step - 1) / step * step, step: step}
}

// width is the length of the bar of n. Counts read from a report.json
// could be negative; a negative width is an SVG error, so they are drawn
// as empty bars.
func (a chartAxis) width(n int64) float64 {
	return float64(max(n, 0)) * chartBarMaxW / float64(a.top)
}

// ticks are the gridlines, labelled by label.
func (a chartAxis) ticks(label func(int64) string) []htmlTick {
	var ts []htmlTick
	for x := int64(0); x <= a.top; x += a.step {
		ts = append(ts, htmlTick{X: chartCoord(chartBarX + a.width(x)), Label: label(x)})
	}
	return ts
}

// chartCoord writes an SVG coordinate, to a tenth.
func chartCoord(x float64) string {
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}

// legendEntry is one series of a chart's legend.
type legendEntry struct{ series, fill, label string }

// chartLegend lays the entries out in a row above the bars, gap apart.
func chartLegend(gap int, entries []legendEntry) []htmlLegend {
	var out []htmlLegend
	x := chartBarX
	for _, l := range entries {
		out = append(out, htmlLegend{X: x, TextX: x + 20, Fill: l.fill, Label: l.label, Series: l.series, SwatchY: 8, TxY: 21})
		x += gap
	}
	return out
}

// niceStep is the smallest gridline interval of 1, 2 or 5 times a power of
// ten that reaches top in at most seven intervals: the longest bar then
// spans most of the chart.
func niceStep(top int64) int64 {
	for step := int64(1); ; step *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if s := step * m; (top+s-1)/s <= 7 {
				return s
			}
		}
	}
}

// group writes n with thousands separators, as the published table does.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// numAny is group for the page, whose values are int or int64.
func numAny(v any) string {
	switch n := v.(type) {
	case int:
		return group(int64(n))
	case int64:
		return group(n)
	case *int64:
		if n == nil {
			return "–"
		}
		return group(*n)
	}
	return fmt.Sprint(v)
}

func signed(n int64) string {
	if n > 0 {
		return "+" + group(n)
	}
	if n == 0 {
		return "±0"
	}
	return group(n)
}

var htmlTemplate = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"num":       numAny,
	"signed":    signed,
	"pct":       func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) },
	"pp":        func(ours, snapshot float64) string { return fmt.Sprintf("%+.3f", points(ours, snapshot)) },
	"percentOf": Percent,
	// Published figures are shown with the precision the spec gives.
	"asGiven":   func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) },
	"codeSpans": codeSpans,
}).Parse(htmlSource))

// codeSpans is text written with Markdown's code spans (the rules are
// written once for report.md and the page) as HTML: each `span` a <code>
// element, everything escaped. Text with an unpaired backtick is shown as
// written.
func codeSpans(s string) template.HTML {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 {
		return template.HTML(template.HTMLEscapeString(s))
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("<code>" + template.HTMLEscapeString(p) + "</code>")
		} else {
			b.WriteString(template.HTMLEscapeString(p))
		}
	}
	return template.HTML(b.String())
}

var htmlSource = pageHead("{{.R.Title}}{{if .R.Verdict}}: {{.R.Verdict}}{{end}}") + `{{if not .R.Verified}}<div class="banner" id="unverified" role="alert"><strong>UNVERIFIED</strong> The input hashes were not checked against a manifest. These counts are not a reproduction of the published census.</div>
{{end}}<div class="wrap">
<h1>{{.R.Title}}</h1>
<section class="verdict {{.VerdictClass}}" id="verdict" data-kind="{{.Kind}}">
{{if eq .Kind "release"}}{{with .R.Deposit}}{{if .Verdict}}<div>Verdict: <span class="word">{{.Verdict}}</span> against the deposit's published table</div>
{{if .Differences}}<ul>{{range .Differences}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{else}}<div><span class="word">No verdict</span>: the deposit publishes no counts</div>
{{end}}{{else}}<div><span class="word">No verdict</span></div>
{{end}}{{if .R.Deposit}}<p>This census release is a deposit made by publish, held to its own published table (its report.json and classes.parquet), not to the {{.R.Snapshot}} snapshot's.</p>
{{else}}<p>This census release is not the published {{.R.Snapshot}} snapshot ({{if not .R.Verified}}its inputs were not checked{{else if .R.Manifest}}its inputs were verified against <code>{{.R.Manifest}}</code>, not the pinned hashes{{else}}its inputs are not the pinned files{{end}}), so it gets no reproduction verdict: its figures stand on their own{{with .R.Baseline}}, beside the baseline run <code>{{.Dir}}</code>{{end}} and beside the published snapshot's in percentage points.</p>
{{end}}{{if .R.Differences}}<ul>{{range .R.Differences}}<li>{{.}}</li>{{end}}</ul>
{{end}}<p class="totals">{{num .R.Tools}} tools on {{num .R.Servers}} servers ({{num .R.Properties}} enumerated properties).</p>
{{else if eq .Kind "synthetic"}}<div>Verdict: <span class="word">{{if .R.Verdict}}{{.R.Verdict}}{{else}}no truth read{{end}}</span></div>
{{if .R.Truth}}{{if .R.Truth.Matches}}<p>Every count equals the synthetic census's own ground truth (<code>{{.R.Truth.File}}</code>): tools, servers, record shapes, the five classes with their required counts, and the two buckets.</p>
{{end}}{{end}}{{if .R.Differences}}<ul>{{range .R.Differences}}<li>{{.}}</li>{{end}}</ul>
{{end}}<p class="totals">{{num .R.Tools}} tools on {{num .R.Servers}} servers ({{num .R.Properties}} enumerated properties). The census is synthetic: the published table it is set beside below is the {{.R.Snapshot}} snapshot's, for scale, and is not expected to match.</p>
{{if .Truth}}<table id="truth">
<thead><tr><th>Count</th><th>This run</th><th>Truth</th><th></th></tr></thead>
<tbody>
{{range .Truth}}<tr><td>{{if .Code}}<code class="id">{{.What}}</code>{{else}}{{.What}}{{end}}</td><td class="n">{{num .Ours}}</td><td class="n">{{num .Truth}}</td><td>{{if .Differs}}<span class="badv">differs</span>{{else}}<span class="good">equal</span>{{end}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{else}}<div>Verdict: <span class="word">{{.R.Verdict}}</span></div>
{{if .R.Differences}}<ul>{{range .R.Differences}}<li>{{.}}</li>{{end}}</ul>
{{end}}<p class="totals">{{num .R.Tools}} tools on {{num .R.Servers}} servers ({{num .R.Properties}} enumerated properties); published: {{num .Published.Tools}} tools on {{num .Published.Servers}} servers, snapshot {{.R.Snapshot}}.</p>
{{end}}</section>

{{if .ChartInPercent}}<h2>Parameter risk classes, in percent of live tools, beside the {{.R.Snapshot}} snapshot</h2>
<p class="note">A tool counts under a class when at least one of its properties carries the label; the dark part of each bar is the tools where such a property is also required. Each census's percentages are of its own live tools.</p>
{{else}}<h2>Parameter risk classes: ours against the published table</h2>
<p class="note">A tool counts under a class when at least one of its properties carries the label; the dark part of each bar is the tools where such a property is also required. Percentages are of live tools.</p>
{{end}}
<svg id="class-chart" class="chart" role="img" aria-labelledby="class-chart-title" xmlns="http://www.w3.org/2000/svg" width="{{.Chart.Width}}" height="{{.Chart.Height}}" viewBox="0 0 {{.Chart.Width}} {{.Chart.Height}}">
<title id="class-chart-title">Tools per parameter risk class, ours beside the published count, with the part that has a required labelled property</title>
<rect x="0" y="0" width="{{.Chart.Width}}" height="{{.Chart.Height}}" fill="#ffffff"/>
{{range .Chart.Legend}}<rect x="{{.X}}" y="{{.SwatchY}}" width="14" height="14" fill="{{.Fill}}" data-legend="{{.Series}}"/><text x="{{.TextX}}" y="{{.TxY}}">{{.Label}}</text>
{{end}}{{$c := .Chart}}{{range .Chart.Ticks}}<line class="grid" x1="{{.X}}" x2="{{.X}}" y1="{{$c.GridTop}}" y2="{{$c.GridBottom}}"/><text class="tick" x="{{.X}}" y="{{$c.AxisLabelY}}" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Chart.Rows}}<g data-class="{{.ID}}">
<text x="{{$c.LabelX}}" y="{{.LabelY}}" text-anchor="end">{{.ID}}</text>
{{range .Bars}}{{if .Percent}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}" data-series="{{.Series}}" data-percent="{{.Percent}}"><title>{{.Series}}: {{.Percent}}%</title></rect>{{else}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}" data-series="{{.Series}}" data-value="{{.Value}}"><title>{{.Series}}: {{num .Value}}</title></rect>{{end}}
{{end}}<text x="{{.OursTextX}}" y="{{.OursTextY}}">{{.OursText}}</text>
<text x="{{.PubTextX}}" y="{{.PubTextY}}">{{.PubText}}</text>
</g>
{{end}}</svg>
{{if .ChartInPercent}}<table id="classes">
<thead><tr><th>Class</th><th>Tools (≥1 property)</th><th>% of live</th><th>≥1 required</th><th>% of live (required)</th><th>Snapshot %</th><th>Δ pp</th></tr></thead>
<tbody>
{{$tools := .R.Tools}}{{range .Classes}}<tr><td><code class="id">{{.ID}}</code></td><td class="n">{{num .Tools}}</td><td class="n">{{pct .Percent}}</td><td class="n">{{num .Required}}</td><td class="n">{{pct (percentOf .Required $tools)}}</td><td class="n">{{pct .Published.Percent}}</td><td class="n">{{pp .Percent .Published.Percent}}</td></tr>
{{end}}</tbody>
</table>
{{else}}<table id="classes">
<thead><tr><th>Class</th><th>Tools (≥1 property)</th><th>% of live</th><th>≥1 required</th><th>Published tools</th><th>Published %</th><th>Published ≥1 required</th><th>Δ tools</th><th>Δ required</th></tr></thead>
<tbody>
{{range .Classes}}<tr><td><code class="id">{{.ID}}</code></td><td class="n">{{num .Tools}}</td><td class="n">{{pct .Percent}}</td><td class="n">{{num .Required}}</td><td class="n">{{num .Published.Tools}}</td><td class="n">{{pct .Published.Percent}}</td><td class="n">{{num .Published.Required}}</td><td class="n">{{signed .DeltaTools}}</td><td class="n">{{signed .DeltaRequired}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{template "baseline" .}}
{{template "sensitivity" .}}
{{template "evaluation" .}}
<h2>Inputs</h2>
{{if .R.Verified}}<p>Expected hashes from: <code>{{.R.Manifest}}</code>.</p>
{{else}}<p class="warnv">Hashes were computed but not checked: no expected values.</p>
{{end}}<table id="inputs">
<thead><tr><th>File (read from)</th><th>Bytes</th><th>Records</th><th>SHA-256 (actual)</th><th>SHA-256 (expected)</th><th>Status</th></tr></thead>
<tbody>
{{range .R.Inputs}}<tr><td><code>{{.Name}}</code><br><code class="loc">{{.Location}}</code></td><td class="n">{{num .Bytes}}</td><td class="n">{{num .Records}}</td><td class="hash">{{.SHA256}}</td><td class="hash">{{if .Expected}}{{.Expected}}{{else}}(not checked){{end}}</td><td>{{if not .Expected}}<span class="warnv">UNVERIFIED</span>{{else if .OK}}<span class="good">ok</span>{{else}}<span class="badv">MISMATCH</span>{{end}}</td></tr>
{{end}}</tbody>
</table>
{{template "release" .}}
<h2>Record shapes</h2>
<table id="shapes">
<thead><tr><th>Shape</th><th>Records</th></tr></thead>
<tbody>
{{range .Shapes}}<tr><td>{{.Name}}</td><td class="n">{{num .Count}}</td></tr>
{{else}}<tr><td colspan="2" class="note">none recorded</td></tr>
{{end}}</tbody>
</table>

<h2>Skipped lines</h2>
{{if .R.Skipped.Count}}<p><strong>{{num .R.Skipped.Count}}</strong> lines were skipped (<code>--skip-bad</code>){{if .R.Skipped.First}}; the first:{{end}}</p>
{{if .R.Skipped.First}}<table id="skipped">
<thead><tr><th>File</th><th>Line</th><th>Error</th></tr></thead>
<tbody>
{{range .R.Skipped.First}}<tr><td><code>{{.File}}</code></td><td class="n">{{num .Line}}</td><td>{{.Error}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{else}}<p>None: every line was read.</p>
{{end}}
<section class="nonnormative" id="buckets">
<h2>Contextual buckets <span class="badge">non-normative</span></h2>
<p class="note">High-recall buckets, reported for comparability only. They are not parameter risk classes and carry no containment semantics.</p>
{{if .ChartInPercent}}<table>
<thead><tr><th>Bucket</th><th>Tools</th><th>% of live</th><th>Snapshot %</th><th>Δ pp</th></tr></thead>
<tbody>
{{range .Buckets}}<tr><td><code class="id">{{.ID}}</code></td><td class="n">{{num .Tools}}</td><td class="n">{{pct .Percent}}</td><td class="n">{{pct .PublishedPercent}}</td><td class="n">{{pp .Percent .PublishedPercent}}</td></tr>
{{end}}</tbody>
</table>
{{else}}<table>
<thead><tr><th>Bucket</th><th>Tools</th><th>% of live</th><th>Published tools</th><th>Published %</th><th>Δ tools</th></tr></thead>
<tbody>
{{range .Buckets}}<tr><td><code class="id">{{.ID}}</code></td><td class="n">{{num .Tools}}</td><td class="n">{{pct .Percent}}</td><td class="n">{{num .Published}}</td><td class="n">{{pct .PublishedPercent}}</td><td class="n">{{signed .DeltaTools}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
</section>
{{if .R.Surface}}
<section class="nonnormative" id="surface">
<h2>Tool-surface figures <span class="badge">non-normative</span></h2>
<p class="note">Our approximation, computed from tool names and descriptions with the rules written below. The published figures come from the archived suite, whose rules are not published; they are not defined by the parameter-class rules.</p>
<table>
<thead><tr><th>Figure</th><th>Tools</th><th>% of live</th><th>Servers</th><th>Published tools</th><th>Published %</th><th>Published servers</th></tr></thead>
<tbody>
{{range .R.Surface}}<tr><td>{{.Title}}</td><td class="n">{{num .Tools}}</td><td class="n">{{pct .Percent}}</td><td class="n">{{if .Servers}}{{num .Servers}}{{else}}–{{end}}</td><td class="n">{{num .Published}}</td><td class="n">{{if .PublishedPercent}}{{asGiven .PublishedPercent}}{{else}}–{{end}}</td><td class="n">{{if .PublishedServers}}{{num .PublishedServers}}{{else}}–{{end}}</td></tr>
{{end}}</tbody>
</table>
{{range .R.Surface}}<p class="rule"><strong>{{.Title}}</strong> (<code>{{.ID}}</code>): {{codeSpans .Rule}}</p>
{{end}}</section>
{{end}}
{{with .R.Definitions}}<section id="definitions">
<h2>Tool definitions</h2>
<p class="note">Tools are hashed as served (<code>definition_sha256</code>: the whole tool object in canonical JSON, RFC 8785; <code>schema_sha256</code>: its input schema alone), so that key order and whitespace do not count. In <code>tools.parquet</code> both are 32-byte binaries (<code>BLOB</code> in DuckDB): <code>lower(hex(definition_sha256))</code> prints the hex digits.</p>
<table>
<tbody>
<tr><td>Distinct definitions</td><td class="n">{{num .Distinct}}</td></tr>
<tr><td>Definitions served by more than one server</td><td class="n">{{num .Shared}}</td></tr>
<tr><td>Distinct input schemas (of {{num .ToolsWithSchema}} tools with an object schema)</td><td class="n">{{num .DistinctSchemas}}</td></tr>
</tbody>
</table>
{{if .MostShared}}<table id="most-shared">
<thead><tr><th>Tool</th><th>Most shared definitions (definition_sha256, first 32 digits)</th><th>Servers</th><th>Tools</th></tr></thead>
<tbody>
{{range .MostShared}}<tr><td>{{if .Tool}}<code>{{.Tool}}</code>{{else}}–{{end}}</td><td class="hash">{{.SHA256Prefix}}</td><td class="n">{{num .Servers}}</td><td class="n">{{num .Tools}}</td></tr>
{{end}}</tbody>
</table>
{{end}}</section>
{{end}}
<footer>Written by atlas-reproduce. Published figures: snapshot {{.R.Snapshot}} of the census of MCP servers, as the parameter risk class specification gives them.</footer>
</div>
</body>
</html>
`
