package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sampleHistory is six monthly releases, the first before the published
// snapshot's day: class shares that drift, and tools added, removed and
// changed from the second release on.
func sampleHistory() []HistoryRow {
	var rows []HistoryRow
	ptr := func(n int64) *int64 { return &n }
	for i := range 6 {
		date := fmt.Sprintf("2026-%02d-20", 7+i)
		live := int64(229539 + 1500*i)
		base := HistoryRow{Release: fmt.Sprintf("rel-%d", i), Date: date, LiveTools: live, Servers: 13089 + int64(40*i)}
		if i > 0 {
			base.ToolsAdded, base.ToolsRemoved, base.ToolsChanged = ptr(int64(2400+300*i)), ptr(int64(900+100*i)), ptr(int64(1500-120*i))
		}
		for j, id := range ClassOrder() {
			n := published.Classes[id].Tools + int64(400*i*(j+1))
			r := base
			r.Class, r.Normative, r.Tools, r.Required, r.Percent = id, true, n, ptr(n/2), Percent(n, live)
			if i > 0 {
				r.Gained, r.Lost = ptr(int64(500*(j+1))), ptr(int64(100*(j+1)))
			}
			rows = append(rows, r)
		}
		for _, id := range []string{"account_identity", "raw_content_blob"} {
			r := base
			r.Class, r.Tools = id, published.Buckets[id]
			r.Percent = Percent(r.Tools, live)
			rows = append(rows, r)
		}
	}
	return rows
}

func renderHistory(t *testing.T, rows []HistoryRow) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHistoryHTML(&b, rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestHistoryHTMLCharts reads the geometry back from the page: a line a
// class through a point a release, each higher on the page as its share
// is larger, the published snapshot's shares on its day; three bars a
// release after the first, each as tall as its count.
func TestHistoryHTMLCharts(t *testing.T) {
	rows := sampleHistory()
	page := renderHistory(t, rows)
	dots := regexp.MustCompile(`<circle cx="([0-9.]+)" cy="([0-9.]+)" r="4" fill="[^"]+" data-release="([^"]+)" data-percent="([0-9.]+)">`).FindAllStringSubmatch(page, -1)
	if len(dots) != 5*6 {
		t.Fatalf("%d points, want 5 classes × 6 releases", len(dots))
	}
	type pt struct{ x, y, pct float64 }
	var pts []pt
	for _, d := range dots {
		x, _ := strconv.ParseFloat(d[1], 64)
		y, _ := strconv.ParseFloat(d[2], 64)
		p, _ := strconv.ParseFloat(d[4], 64)
		pts = append(pts, pt{x, y, p})
	}
	// One scale for every point: y falls as the share rises, linearly.
	lo, hi := pts[0], pts[0]
	for _, p := range pts {
		if p.pct < lo.pct {
			lo = p
		}
		if p.pct > hi.pct {
			hi = p
		}
	}
	perPoint := (lo.y - hi.y) / (hi.pct - lo.pct)
	for _, p := range pts {
		if want := lo.y - (p.pct-lo.pct)*perPoint; math.Abs(p.y-want) > 0.11 {
			t.Errorf("the point of %.3f%% is at y %.1f, want %.1f", p.pct, p.y, want)
		}
	}
	// Points of one release share an x; releases a month apart are
	// spaced by their days.
	xs := map[string]float64{}
	for i, d := range dots {
		if x, ok := xs[d[3]]; ok && x != pts[i].x {
			t.Errorf("release %s drawn at x %v and %v", d[3], x, pts[i].x)
		}
		xs[d[3]] = pts[i].x
	}
	if !(xs["rel-0"] < xs["rel-1"] && xs["rel-1"] < xs["rel-5"]) {
		t.Errorf("releases not in date order along x: %v", xs)
	}
	snap := regexp.MustCompile(`<line x1="([0-9.]+)" x2="[0-9.]+" y1="[0-9]+" y2="[0-9]+" stroke="#57606a" stroke-width="1.5" stroke-dasharray="5 4" data-snapshot="2026-10-12"/>`).FindStringSubmatch(page)
	if snap == nil {
		t.Fatal("the published snapshot is not marked")
	}
	sx, _ := strconv.ParseFloat(snap[1], 64)
	// 2026-10-12 lies between rel-2 (2026-09-20) and rel-3 (2026-10-20).
	if !(xs["rel-2"] < sx && sx < xs["rel-3"]) {
		t.Errorf("the snapshot's day at x %v, not between rel-2 (%v) and rel-3 (%v)", sx, xs["rel-2"], xs["rel-3"])
	}
	pub := regexp.MustCompile(`<circle cx="([0-9.]+)" cy="([0-9.]+)" r="6" fill="#ffffff" stroke="[^"]+" stroke-width="2.5" data-published="([0-9.]+)">`).FindAllStringSubmatch(page, -1)
	if len(pub) != 5 {
		t.Fatalf("%d published points, want 5", len(pub))
	}
	for i, p := range pub {
		x, _ := strconv.ParseFloat(p[1], 64)
		y, _ := strconv.ParseFloat(p[2], 64)
		want := published.Classes[ClassOrder()[i]].Percent
		if p[3] != strconv.FormatFloat(want, 'f', 3, 64) || x != sx || math.Abs(y-(lo.y-(want-lo.pct)*perPoint)) > 0.11 {
			t.Errorf("published point %v, want %.3f%% on the snapshot's line", p[1:], want)
		}
	}
	bars := regexp.MustCompile(`<rect x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="([0-9.]+)" fill="[^"]+" data-series="(added|removed|changed)" data-release="([^"]+)" data-value="([0-9]+)">`).FindAllStringSubmatch(page, -1)
	if len(bars) != 3*5 {
		t.Fatalf("%d bars, want 3 for each release but the first", len(bars))
	}
	var perTool float64
	for _, b := range bars {
		h, _ := strconv.ParseFloat(b[2], 64)
		v, _ := strconv.ParseFloat(b[5], 64)
		if b[4] == "rel-0" {
			t.Errorf("the first release has a %s bar", b[3])
		}
		if perTool == 0 {
			perTool = h / v
		}
		if math.Abs(h-v*perTool) > 0.15 {
			t.Errorf("%s %s bar of %v is %v high, want %.1f", b[4], b[3], v, h, v*perTool)
		}
	}
	for _, want := range []string{`<table id="releases">`, `<td><code>rel-5</code></td><td>2026-12-20</td>`, `<table id="history">`, "published snapshot</td><td>2026-10-12</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("history.html lacks %q", want)
		}
	}
}

// historyProbe writes where each chart was laid out into the DOM, for the
// test's copy of the page only.
const historyProbe = `<script>(function(){var o=document.createElement("pre");o.id="chart-rects";var out={};` +
	`["shares-chart","changes-chart"].forEach(function(id){var e=document.getElementById(id);if(e){var r=e.getBoundingClientRect();out[id]=[r.left,r.top,r.width,r.height,window.devicePixelRatio];}});` +
	`o.textContent=JSON.stringify(out);document.body.appendChild(o);})();</script>`

// TestHistoryHTMLRendersInChromium loads history.html in headless Chromium,
// as TestHTMLRendersInChromium does report.html: both charts are laid out
// inside the page, each line and bar colour is drawn, and the page logs
// nothing to the console.
func TestHistoryHTMLRendersInChromium(t *testing.T) {
	needChromium(t)
	page := renderHistory(t, sampleHistory())
	page = withProbe(t, page, historyProbe)
	res := runChromium(t, page)
	if len(res.console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(res.console, "\n"))
	}
	m := regexp.MustCompile(`<pre id="chart-rects">([^<]*)</pre>`).FindStringSubmatch(res.dom)
	if m == nil {
		t.Fatalf("the probe did not run; DOM:\n%.2000s", res.dom)
	}
	var rects map[string][]float64
	if err := json.Unmarshal([]byte(m[1]), &rects); err != nil {
		t.Fatalf("chart rects %q: %v", m[1], err)
	}
	for _, c := range []struct {
		id      string
		colours []string
		least   int
	}{
		{"shares-chart", classColours, 400},
		{"changes-chart", []string{colourAdded, colourRemoved, colourChanged}, 1500},
	} {
		rect := rects[c.id]
		if len(rect) != 5 {
			t.Errorf("%s was not laid out: %v", c.id, rects)
			continue
		}
		dpr := rect[4]
		x0, y0 := int(math.Ceil(rect[0]*dpr))+1, int(math.Ceil(rect[1]*dpr))+1
		x1, y1 := int((rect[0]+rect[2])*dpr)-1, int((rect[1]+rect[3])*dpr)-1
		b := res.shot.Bounds()
		if rect[2] < 500 || rect[3] < 200 || x0 < b.Min.X || y0 < b.Min.Y || x1 > b.Max.X || y1 > b.Max.Y {
			t.Errorf("%s at %v is not inside the %v screenshot", c.id, rect[:4], b)
			continue
		}
		counts := colourPixels(res.shot, image.Rect(x0, y0, x1, y1), c.colours)
		t.Logf("%s %v: pixels per colour %v", c.id, rect[:4], counts)
		for _, col := range c.colours {
			// More than a legend swatch or line (under 200 pixels):
			// the lines and bars themselves are drawn.
			if counts[col] < c.least {
				t.Errorf("%s: colour %s covers %d pixels, want %d or more", c.id, col, counts[col], c.least)
			}
		}
	}
}

// colourPixels counts, inside r, the pixels of each colour (to within 6
// of each channel).
func colourPixels(img image.Image, r image.Rectangle, colours []string) map[string]int {
	abs := func(x int) int { return max(x, -x) }
	counts := map[string]int{}
	type rgb struct{ r, g, b int }
	want := map[string]rgb{}
	for _, c := range colours {
		v, _ := strconv.ParseUint(c[1:], 16, 32)
		want[c] = rgb{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			R, G, B, _ := img.At(x, y).RGBA()
			p := rgb{int(R >> 8), int(G >> 8), int(B >> 8)}
			for name, c := range want {
				if abs(p.r-c.r) <= 6 && abs(p.g-c.g) <= 6 && abs(p.b-c.b) <= 6 {
					counts[name]++
				}
			}
		}
	}
	return counts
}
