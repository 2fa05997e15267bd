package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"time"
)

// History charts' geometry, in SVG user units: the plot between
// histLeft and histRight, the legend to its right.
const (
	histWidth   = 1000
	histLeft    = 70
	histRight   = 790
	histLegendX = 815
	histTop     = 34
	// histLabelGap is the least distance between two labels of the
	// horizontal axis; labels closer to the last one drawn are left out
	// (each point and bar still has its title).
	histLabelGap = 80
)

// classColours are the lines of the five classes, in the published order:
// the Okabe–Ito palette, told apart with any colour vision.
var classColours = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00"}

// Bar colours of the tools added, removed and changed per release.
const (
	colourAdded   = "#2e8b57"
	colourRemoved = "#c0392b"
	colourChanged = "#7b68ee"
)

type svgText struct {
	X, Y, Anchor, Text string
}

type svgGrid struct {
	Y     string
	Label svgText
}

type svgDot struct {
	X, Y, Release, Date, Percent string
}

type svgSeries struct {
	Class, Colour, Points string
	Dots                  []svgDot
	// Published is the snapshot's share of the class, marked on its day.
	Published svgDot
}

type svgBar struct {
	Series, Fill, Release string
	X, Y, W, H            string
	Value                 int64
}

type svgLegend struct {
	Series, Fill, Label string
	Y, TextY            int
	Line                bool
}

// svgChart is one chart of history.html: lines (the class shares) or bars
// (the tools added, removed and changed), on a grid of horizontal lines.
type svgChart struct {
	Width, Height int
	// ViewX is the viewBox's left edge: below 0 when the axis labels need
	// more room than the margin left of the plot.
	ViewX             int
	Left, Right, Top  int
	Bottom            string
	Grid              []svgGrid
	XLabels           []svgText
	Series            []svgSeries
	Bars              []svgBar
	Legend            []svgLegend
	LegendX, LegendTX int
	// SnapshotX places the published snapshot's day; SnapshotLabel names it.
	SnapshotX     string
	SnapshotLabel svgText
}

// yAxis is a vertical axis from 0 at bottom to a.top at top.
type yAxis struct {
	chartAxis
	top, bottom float64
}

func (y yAxis) at(n int64) float64 {
	return y.bottom - float64(max(n, 0))*(y.bottom-y.top)/float64(y.chartAxis.top)
}

func (y yAxis) grid(label func(int64) string) []svgGrid {
	var g []svgGrid
	for v := int64(0); v <= y.chartAxis.top; v += y.step {
		yy := chartCoord(y.at(v))
		g = append(g, svgGrid{Y: yy, Label: svgText{X: strconv.Itoa(histLeft - 8), Y: chartCoord(y.at(v) + 4), Anchor: "end", Text: label(v)}})
	}
	return g
}

// fitAxisLabels moves the viewBox's left edge out until the longest
// y-axis label, right-aligned before the plot, is inside the picture.
func (c *svgChart) fitAxisLabels() {
	for _, g := range c.Grid {
		if left := int(math.Floor(histLeft-8-textWidth(g.Label.Text))) - chartTextPad; left < c.ViewX {
			c.Width += c.ViewX - left
			c.ViewX = left
		}
	}
}

// thin keeps the labels at least histLabelGap apart, the first one always.
func thin(labels []svgText, xs []float64) []svgText {
	var out []svgText
	last := math.Inf(-1)
	for i, l := range labels {
		if xs[i]-last >= histLabelGap {
			out, last = append(out, l), xs[i]
		}
	}
	return out
}

func milli(x float64) int64 { return int64(math.Round(x * 1000)) }

func pctLabel(m int64) string { return strconv.FormatFloat(float64(m)/1000, 'f', -1, 64) + "%" }

// day is a date's day number; dates were checked when the rows were made,
// and one that does not parse is day 0.
func day(date string) float64 {
	t, err := time.Parse(DateLayout, date)
	if err != nil {
		return 0
	}
	return float64(t.Unix() / 86400)
}

// drawShares draws each class's share of live tools, release by release,
// on a time axis that also holds the published snapshot's day, where the
// snapshot's shares are marked.
func drawShares(rels []historyRelease) svgChart {
	const bottom = 300
	c := svgChart{Width: histWidth, Height: bottom + 40, Left: histLeft, Right: histRight, Top: histTop, Bottom: strconv.Itoa(bottom), LegendX: histLegendX, LegendTX: histLegendX + 34}
	ids := ClassOrder()
	var largest int64 = 1
	first, last := day(published.Snapshot), day(published.Snapshot)
	for _, r := range rels {
		first, last = min(first, day(r.Date)), max(last, day(r.Date))
		for _, x := range r.Rows {
			if x.Normative {
				largest = max(largest, milli(x.Percent))
			}
		}
	}
	for _, id := range ids {
		largest = max(largest, milli(published.Classes[id].Percent))
	}
	if first == last {
		first, last = first-1, last+1
	}
	y := yAxis{chartAxis: newChartAxis(largest), top: histTop, bottom: bottom}
	c.Grid = y.grid(pctLabel)
	c.fitAxisLabels()
	const inset = 12
	x := func(date string) float64 {
		return histLeft + inset + (day(date)-first)*(histRight-histLeft-2*inset)/(last-first)
	}
	xs := spread(rels, x, histLeft+inset, histRight-inset)
	var labels []svgText
	for i, r := range rels {
		labels = append(labels, svgText{X: chartCoord(xs[i]), Y: strconv.Itoa(bottom + 20), Anchor: "middle", Text: r.Date})
	}
	c.XLabels = thin(labels, xs)
	sx := x(published.Snapshot)
	c.SnapshotX = chartCoord(sx)
	c.SnapshotLabel = svgText{X: chartCoord(sx + 4), Y: strconv.Itoa(histTop - 12), Anchor: "start", Text: "published snapshot " + published.Snapshot}
	if sx > (histLeft+histRight)/2 {
		c.SnapshotLabel.X, c.SnapshotLabel.Anchor = chartCoord(sx-4), "end"
	}
	for i, id := range ids {
		s := svgSeries{Class: id, Colour: classColours[i%len(classColours)]}
		for k, r := range rels {
			for _, row := range r.Rows {
				if row.Class != id {
					continue
				}
				d := svgDot{X: chartCoord(xs[k]), Y: chartCoord(y.at(milli(row.Percent))), Release: r.Release, Date: r.Date, Percent: strconv.FormatFloat(row.Percent, 'f', 3, 64)}
				if s.Points != "" {
					s.Points += " "
				}
				s.Points += d.X + "," + d.Y
				s.Dots = append(s.Dots, d)
			}
		}
		p := published.Classes[id].Percent
		s.Published = svgDot{X: c.SnapshotX, Y: chartCoord(y.at(milli(p))), Release: "published", Date: published.Snapshot, Percent: strconv.FormatFloat(p, 'f', 3, 64)}
		c.Series = append(c.Series, s)
		c.Legend = append(c.Legend, svgLegend{Series: id, Fill: s.Colour, Label: id, Y: histTop + i*24, TextY: histTop + i*24 + 5, Line: true})
	}
	n := len(ids)
	c.Legend = append(c.Legend, svgLegend{Series: "published", Fill: "#ffffff", Label: "snapshot " + published.Snapshot, Y: histTop + n*24, TextY: histTop + n*24 + 5})
	return c
}

// histSameDayGap is how far apart releases of one day (or of days too
// close to tell apart) are drawn, so that a line joins them as a slope
// from one release to the next rather than a vertical stroke.
const histSameDayGap = 10

// spread places the releases, in their order, at their day's x, each at
// least histSameDayGap right of the one before and none past right.
func spread(rels []historyRelease, x func(string) float64, left, right float64) []float64 {
	xs := make([]float64, len(rels))
	for i, r := range rels {
		xs[i] = x(r.Date)
		if i > 0 {
			xs[i] = max(xs[i], xs[i-1]+histSameDayGap)
		}
	}
	for i := len(xs) - 1; i >= 0; i-- {
		limit := right
		if i+1 < len(xs) {
			limit = xs[i+1] - histSameDayGap
		}
		xs[i] = max(min(xs[i], limit), left)
	}
	return xs
}

// drawChanges draws the tools added, removed and changed in each release
// beside the one before, as three bars a release.
func drawChanges(rels []historyRelease) svgChart {
	const bottom = 250
	c := svgChart{Width: histWidth, Height: bottom + 40, Left: histLeft, Right: histRight, Top: histTop, Bottom: strconv.Itoa(bottom), LegendX: histLegendX, LegendTX: histLegendX + 22}
	var largest int64 = 1
	for _, r := range rels {
		for _, n := range []*int64{r.ToolsAdded, r.ToolsRemoved, r.ToolsChanged} {
			if n != nil {
				largest = max(largest, *n)
			}
		}
	}
	y := yAxis{chartAxis: newChartAxis(largest), top: histTop, bottom: bottom}
	c.Grid = y.grid(group)
	c.fitAxisLabels()
	slot := float64(histRight-histLeft) / float64(max(len(rels), 1))
	barW := min(22, slot*0.8/3)
	var labels []svgText
	var xs []float64
	for i, r := range rels {
		mid := histLeft + slot*(float64(i)+0.5)
		labels = append(labels, svgText{X: chartCoord(mid), Y: strconv.Itoa(bottom + 20), Anchor: "middle", Text: r.Release})
		xs = append(xs, mid)
		for j, s := range []struct {
			series, fill string
			n            *int64
		}{{"added", colourAdded, r.ToolsAdded}, {"removed", colourRemoved, r.ToolsRemoved}, {"changed", colourChanged, r.ToolsChanged}} {
			if s.n == nil {
				continue
			}
			top := y.at(*s.n)
			c.Bars = append(c.Bars, svgBar{Series: s.series, Fill: s.fill, Release: r.Release, Value: *s.n,
				X: chartCoord(mid + (float64(j)-1.5)*barW), Y: chartCoord(top), W: chartCoord(barW), H: chartCoord(bottom - top)})
		}
	}
	c.XLabels = thin(labels, xs)
	for i, l := range []struct{ series, fill, label string }{{"added", colourAdded, "tools added"}, {"removed", colourRemoved, "tools removed"}, {"changed", colourChanged, "tools changed"}} {
		c.Legend = append(c.Legend, svgLegend{Series: l.series, Fill: l.fill, Label: l.label, Y: histTop + i*24 - 7, TextY: histTop + i*24 + 5})
	}
	return c
}

type historyView struct {
	Releases  []historyRelease
	Rows      []HistoryRow
	Classes   []string
	Snapshot  string
	Published map[string]Row
	Shares    svgChart
	Changes   svgChart
}

// share is a release's share of class id, for the page's table.
func (r historyRelease) Share(id string) string {
	for _, x := range r.Rows {
		if x.Class == id {
			return strconv.FormatFloat(x.Percent, 'f', 3, 64)
		}
	}
	return "–"
}

// WriteHistoryHTML writes history.html: one self-contained page (inline
// CSS and SVG, no script, no external resource) with the class shares over
// the releases as lines, the published snapshot marked, the tools added,
// removed and changed per release as bars, and the tables of
// history.md.
func WriteHistoryHTML(w io.Writer, rows []HistoryRow) error {
	rels := byRelease(rows)
	v := historyView{Releases: rels, Rows: rows, Classes: ClassOrder(), Snapshot: published.Snapshot, Published: published.Classes,
		Shares: drawShares(rels), Changes: drawChanges(rels)}
	return historyTemplate.Execute(w, &v)
}

var historyTemplate = template.Must(template.New("history.html").Funcs(template.FuncMap{
	"num":  numAny,
	"pct":  func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) },
	"bool": func(b bool) string { return fmt.Sprint(b) },
}).Parse(historySource))

var historySource = pageHead("The census over time: {{len .Releases}} releases") + `<div class="wrap">
<h1>The census over time</h1>
<p>{{len .Releases}} releases, by the day each census was taken. Percentages are of each release's live tools; tools added, removed and changed, and the tools that gained or lost a class, are beside the release before, as <code>diff</code> compares two runs.</p>
{{define "grid"}}{{$c := .}}{{range .Grid}}<line class="grid" x1="{{$c.Left}}" x2="{{$c.Right}}" y1="{{.Y}}" y2="{{.Y}}"/><text class="tick" x="{{.Label.X}}" y="{{.Label.Y}}" text-anchor="{{.Label.Anchor}}">{{.Label.Text}}</text>
{{end}}<line class="axis" x1="{{.Left}}" x2="{{.Right}}" y1="{{.Bottom}}" y2="{{.Bottom}}"/>
{{range .XLabels}}<text class="tick" x="{{.X}}" y="{{.Y}}" text-anchor="{{.Anchor}}">{{.Text}}</text>
{{end}}{{end}}
<h2>Class shares, in percent of live tools</h2>
<p class="note">One line a class, one point a release; the ringed points on the dashed line are the published snapshot's shares ({{.Snapshot}}).</p>
{{$s := .Shares}}<svg id="shares-chart" class="chart" role="img" aria-labelledby="shares-chart-title" xmlns="http://www.w3.org/2000/svg" width="{{$s.Width}}" height="{{$s.Height}}" viewBox="{{$s.ViewX}} 0 {{$s.Width}} {{$s.Height}}">
<title id="shares-chart-title">Share of live tools of each parameter risk class, release by release, with the published snapshot marked</title>
<rect x="0" y="0" width="{{$s.Width}}" height="{{$s.Height}}" fill="#ffffff"/>
{{template "grid" $s}}<line x1="{{$s.SnapshotX}}" x2="{{$s.SnapshotX}}" y1="{{$s.Top}}" y2="{{$s.Bottom}}" stroke="#57606a" stroke-width="1.5" stroke-dasharray="5 4" data-snapshot="{{.Snapshot}}"/>
<text x="{{$s.SnapshotLabel.X}}" y="{{$s.SnapshotLabel.Y}}" text-anchor="{{$s.SnapshotLabel.Anchor}}">{{$s.SnapshotLabel.Text}}</text>
{{range $s.Series}}{{$col := .Colour}}<g data-class="{{.Class}}">
<polyline points="{{.Points}}" fill="none" stroke="{{$col}}" stroke-width="2.5" stroke-linejoin="round"/>
{{range .Dots}}<circle cx="{{.X}}" cy="{{.Y}}" r="4" fill="{{$col}}" data-release="{{.Release}}" data-percent="{{.Percent}}"><title>{{.Release}} ({{.Date}}): {{.Percent}}%</title></circle>
{{end}}{{with .Published}}<circle cx="{{.X}}" cy="{{.Y}}" r="6" fill="#ffffff" stroke="{{$col}}" stroke-width="2.5" data-published="{{.Percent}}"><title>published snapshot {{.Date}}: {{.Percent}}%</title></circle>
{{end}}</g>
{{end}}{{range $s.Legend}}{{if .Line}}<line x1="{{$s.LegendX}}" x2="{{$s.LegendTX}}" y1="{{.Y}}" y2="{{.Y}}" stroke="{{.Fill}}" stroke-width="3" data-legend="{{.Series}}"/>{{else}}<circle cx="{{$s.LegendX}}" cy="{{.Y}}" r="6" fill="#ffffff" stroke="#57606a" stroke-width="2" data-legend="{{.Series}}"/>{{end}}<text x="{{$s.LegendTX}}" y="{{.TextY}}" dx="6">{{.Label}}</text>
{{end}}</svg>

<h2>Tools added, removed and changed, per release</h2>
<p class="note">Beside the release before (none for the first); a changed tool kept its server, name and ordinal and has another definition.</p>
{{$b := .Changes}}<svg id="changes-chart" class="chart" role="img" aria-labelledby="changes-chart-title" xmlns="http://www.w3.org/2000/svg" width="{{$b.Width}}" height="{{$b.Height}}" viewBox="{{$b.ViewX}} 0 {{$b.Width}} {{$b.Height}}">
<title id="changes-chart-title">Tools added, removed and changed in each release beside the release before</title>
<rect x="0" y="0" width="{{$b.Width}}" height="{{$b.Height}}" fill="#ffffff"/>
{{template "grid" $b}}{{range $b.Bars}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}" data-series="{{.Series}}" data-release="{{.Release}}" data-value="{{.Value}}"><title>{{.Release}}: {{num .Value}} {{.Series}}</title></rect>
{{end}}{{range $b.Legend}}<rect x="{{$b.LegendX}}" y="{{.Y}}" width="14" height="14" fill="{{.Fill}}" data-legend="{{.Series}}"/><text x="{{$b.LegendTX}}" y="{{.TextY}}">{{.Label}}</text>
{{end}}</svg>

<h2>Releases</h2>
<table id="releases">
<thead><tr><th>Release</th><th>Date</th><th>Live tools</th><th>Servers</th><th>Added</th><th>Removed</th><th>Changed</th></tr></thead>
<tbody>
{{range .Releases}}<tr><td><code>{{.Release}}</code></td><td>{{.Date}}</td><td class="n">{{num .LiveTools}}</td><td class="n">{{num .Servers}}</td><td class="n">{{num .ToolsAdded}}</td><td class="n">{{num .ToolsRemoved}}</td><td class="n">{{num .ToolsChanged}}</td></tr>
{{end}}</tbody>
</table>

<h2>Class shares (% of live tools)</h2>
<table id="shares">
<thead><tr><th>Release</th><th>Date</th>{{range .Classes}}<th><code class="id">{{.}}</code></th>{{end}}</tr></thead>
<tbody>
{{$classes := .Classes}}{{range .Releases}}{{$r := .}}<tr><td><code>{{.Release}}</code></td><td>{{.Date}}</td>{{range $classes}}<td class="n">{{$r.Share .}}</td>{{end}}</tr>
{{end}}<tr><td>published snapshot</td><td>{{.Snapshot}}</td>{{$pub := .Published}}{{range $classes}}<td class="n">{{pct (index $pub .).Percent}}</td>{{end}}</tr>
</tbody>
</table>

<h2>Every release and class</h2>
<p class="note">The rows of <code>history.parquet</code>. The buckets <span class="badge">non-normative</span> are not risk classes; the comparison does not follow them.</p>
<table id="history">
<thead><tr><th>Release</th><th>Date</th><th>Class</th><th>Normative</th><th>Tools</th><th>≥1 required</th><th>% of live</th><th>Gained</th><th>Lost</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td><code>{{.Release}}</code></td><td>{{.Date}}</td><td><code class="id">{{.Class}}</code></td><td>{{bool .Normative}}</td><td class="n">{{num .Tools}}</td><td class="n">{{num .Required}}</td><td class="n">{{pct .Percent}}</td><td class="n">{{num .Gained}}</td><td class="n">{{num .Lost}}</td></tr>
{{end}}</tbody>
</table>
<footer>Written by atlas-reproduce history. Published figures: snapshot {{.Snapshot}} of the census of MCP servers, as the parameter risk class specification gives them.</footer>
</div>
</body>
</html>
`
