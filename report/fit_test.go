package report

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fitProbe is added to the test's copy of a page only: it lists every SVG
// text whose box leaves its SVG's viewBox, every table wider than its
// container, every cell whose content overflows it, and a page wider than the window, into a <pre> that
// --dump-dom prints.
const fitProbe = `<script>(function(){var bad=[];` +
	`document.querySelectorAll("svg").forEach(function(s){var vb=s.viewBox.baseVal;if(!vb||!vb.width)return;` +
	`s.querySelectorAll("text").forEach(function(t){var b=t.getBBox();` +
	`if(b.x<vb.x-0.5||b.y<vb.y-0.5||b.x+b.width>vb.x+vb.width+0.5||b.y+b.height>vb.y+vb.height+0.5)` +
	`bad.push((s.id||"svg")+": text "+JSON.stringify(t.textContent)+" at "+[b.x,b.y,b.width,b.height].map(Math.round)+" outside viewBox "+[vb.x,vb.y,vb.width,vb.height]);});});` +
	`document.querySelectorAll("table").forEach(function(t){var p=t.parentElement;` +
	`if(t.scrollWidth>p.clientWidth+1)bad.push("table "+(t.id||t.className)+": "+t.scrollWidth+"px in a "+p.clientWidth+"px container");});` +
	`document.querySelectorAll("td,th").forEach(function(c){if(c.scrollWidth>c.clientWidth+1)bad.push("cell "+JSON.stringify(c.textContent.slice(0,40))+": "+c.scrollWidth+"px in "+c.clientWidth+"px");});` +
	`var d=document.documentElement;if(d.scrollWidth>window.innerWidth+1)bad.push("page "+d.scrollWidth+"px in a "+window.innerWidth+"px window");` +
	`var o=document.createElement("pre");o.id="fit";o.textContent=JSON.stringify(bad);document.body.appendChild(o);})();</script>`

// withProbe lets probe run in page, whose policy forbids scripts.
func withProbe(t *testing.T, page, probe string) string {
	t.Helper()
	const csp = `content="default-src 'none'; style-src 'unsafe-inline'"`
	if strings.Count(page, csp) != 1 || strings.Count(page, "</body>") != 1 {
		t.Fatal("page layout changed: update the probe injection")
	}
	page = strings.Replace(page, csp, `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"`, 1)
	return strings.Replace(page, "</body>", probe+"</body>", 1)
}

// misfits renders page in Chromium and returns what the probe found.
func misfits(t *testing.T, page string) []string {
	t.Helper()
	res := runChromium(t, withProbe(t, page, fitProbe))
	m := regexp.MustCompile(`<pre id="fit">([^<]*)</pre>`).FindStringSubmatch(res.dom)
	if m == nil {
		t.Fatalf("the probe did not run; DOM:\n%.2000s", res.dom)
	}
	var bad []string
	if err := json.Unmarshal([]byte(strings.ReplaceAll(m[1], "&amp;", "&")), &bad); err != nil {
		t.Fatalf("probe output %q: %v", m[1], err)
	}
	return bad
}

// scaleReport multiplies every count of r by k, as a census k times the
// size would have them.
func scaleReport(r *Report, k int64) *Report {
	r.Tools, r.Servers, r.Properties = r.Tools*k, r.Servers*k, r.Properties*k
	for id, c := range r.Classes {
		c.Tools, c.Required = c.Tools*k, c.Required*k
		c.Published.Tools, c.Published.Required = c.Published.Tools*k, c.Published.Required*k
		c.DeltaTools, c.DeltaRequired = c.Tools-c.Published.Tools, c.Required-c.Published.Required
		r.Classes[id] = c
	}
	return r
}

// longChanges puts n changed tools with long unbroken server ids and
// names into r's baseline lists.
func longChanges(r *Report, n int) *Report {
	tc := r.Baseline.Diff.ToolChanges
	for i := range n {
		row := tc.Changed[0]
		server := fmt.Sprintf("io.github.%s/server-%d", strings.Repeat("very-long-organisation-name-", 6), i)
		tool := fmt.Sprintf("tool_%s_%d", strings.Repeat("with_a_long_name_", 5), i)
		row.ServerID, row.Tool = &server, &tool
		tc.Changed = append(tc.Changed, row)
	}
	return r
}

// historyOf is sampleHistory's shape over n releases, two on each day,
// with counts k times as large.
func historyOf(n int, k int64) []HistoryRow {
	var rows []HistoryRow
	ptr := func(v int64) *int64 { return &v }
	for i := range n {
		date := fmt.Sprintf("2026-%02d-%02d", 7+i/2/28%6, 1+i/2%28)
		live := k * int64(229539+1500*i)
		base := HistoryRow{Release: fmt.Sprintf("release-%03d", i), Date: date, LiveTools: live, Servers: k * (13089 + int64(40*i))}
		if i > 0 {
			base.ToolsAdded, base.ToolsRemoved, base.ToolsChanged = ptr(k*int64(2400+300*i)), ptr(k*int64(900+100*i)), ptr(k*int64(1500+120*i))
		}
		for j, id := range ClassOrder() {
			t := k * (published.Classes[id].Tools + int64(400*i*(j+1)))
			r := base
			r.Class, r.Normative, r.Tools, r.Required, r.Percent = id, true, t, ptr(t/2), Percent(t, live)
			rows = append(rows, r)
		}
	}
	return rows
}

// TestPagesFitInChromium renders report.html (with and without a baseline
// of long names) and history.html at small and large counts in Chromium:
// no SVG text leaves its picture, no table overflows its column, the page
// is no wider than the window.
func TestPagesFitInChromium(t *testing.T) {
	needChromium(t)
	cases := []struct {
		name string
		page func(t *testing.T) string
	}{
		{"report", func(t *testing.T) string { return renderHTML(t, sampleReport(true)) }},
		{"report large", func(t *testing.T) string { return renderHTML(t, scaleReport(sampleReport(true), 997)) }},
		{"report baseline", func(t *testing.T) string { return renderHTML(t, longChanges(baselineReport(t), 3)) }},
		{"history two releases of a day", func(t *testing.T) string { return renderHistory(t, historyOf(2, 1)) }},
		{"history large", func(t *testing.T) string { return renderHistory(t, historyOf(60, 1000)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, m := range misfits(t, c.page(t)) {
				t.Error(m)
			}
		})
	}
	// The probe must be able to fail: a text past its viewBox and a table
	// wider than its column are found.
	t.Run("detector", func(t *testing.T) {
		t.Parallel()
		page := `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"></head><body>` +
			`<svg viewBox="0 0 100 20" width="100" height="20"><text x="90" y="15">far too long a label</text></svg>` +
			`<div style="width:200px"><table><tr><td>` + strings.Repeat("x", 300) + `</td></tr></table></div></body></html>`
		bad := misfits(t, page)
		if len(bad) < 2 {
			t.Errorf("the probe found %q in a page with a clipped text and an overflowing table", bad)
		}
	})
}

// TestHistorySameDaySlopes: releases of one day are drawn apart, so that
// the class lines never run straight up.
func TestHistorySameDaySlopes(t *testing.T) {
	for _, n := range []int{2, 3, 60} {
		page := renderHistory(t, historyOf(n, 1))
		lines := regexp.MustCompile(`<polyline points="([^"]+)"`).FindAllStringSubmatch(page, -1)
		if len(lines) == 0 {
			t.Fatalf("%d releases: no line drawn", n)
		}
		for _, l := range lines {
			last := -1.0
			for _, p := range strings.Fields(l[1]) {
				x, err := strconv.ParseFloat(strings.Split(p, ",")[0], 64)
				if err != nil {
					t.Fatalf("point %q: %v", p, err)
				}
				if x <= last {
					t.Errorf("%d releases: point at x=%v after one at x=%v: a vertical or backward segment", n, x, last)
				}
				if x > histRight {
					t.Errorf("%d releases: point at x=%v past the plot's right edge %v", n, x, histRight)
				}
				last = x
			}
		}
	}
}

// TestRulesShowCode: the rules are written with Markdown code spans, which
// the page shows as code, never as backticks.
func TestRulesShowCode(t *testing.T) {
	r := sampleReport(true)
	ticks := 0
	for _, s := range r.Surface {
		ticks += strings.Count(s.Rule, "`")
	}
	for _, d := range sensitivityDefinitions {
		ticks += strings.Count(d.Text, "`")
	}
	if ticks == 0 {
		t.Fatal("no rule text has a code span: the test checks nothing")
	}
	page := renderHTML(t, r)
	rules := regexp.MustCompile(`(?s)<p class="rule">(.*?)</p>`).FindAllStringSubmatch(page, -1)
	if len(rules) == 0 {
		t.Fatal("no rule on the page")
	}
	code := 0
	for _, m := range rules {
		if strings.Contains(m[1], "`") {
			t.Errorf("a backtick on the page: %s", m[1])
		}
		code += strings.Count(m[1], "<code>")
	}
	if code < ticks/2 {
		t.Errorf("%d code elements in the rules for %d backticks", code, ticks)
	}
	if got, want := string(codeSpans("a `<b>` & `c`")), "a <code>&lt;b&gt;</code> &amp; <code>c</code>"; got != want {
		t.Errorf("codeSpans = %q, want %q", got, want)
	}
	if got, want := string(codeSpans("one ` alone")), "one ` alone"; got != want {
		t.Errorf("codeSpans = %q, want %q", got, want)
	}
}
