package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// sampleReport is a NOT REPRODUCED run with every section filled, and text
// that must be escaped in the places a report carries outside text.
func sampleReport(verified bool) *Report {
	r := &Report{
		Verdict:     VerdictNotReproduced,
		Differences: []string{`gg:url-endpoint: 31,870 tools, published 31,880`, `<script>alert("x")</script> & "quoted"`},
		Verified:    verified,
		Snapshot:    published.Snapshot,
		Tools:       229539, Servers: 13089, Properties: 1843210,
		Inputs: []Input{
			{Name: "servers.jsonl.gz", Location: "data/servers.jsonl.gz", Bytes: 1204331, Records: 13089,
				SHA256: "3071866184521fb36aeac6ac715687ed4bf99b9b034646da61176f54a3dfa9d8", Expected: "3071866184521fb36aeac6ac715687ed4bf99b9b034646da61176f54a3dfa9d8", OK: true},
			{Name: "server_tools.jsonl.gz", Location: "data/server_tools.jsonl.gz", Bytes: 9311020, Records: 13089,
				SHA256: "00000000000000000000000000000000000000000000000000000000000000ff", Expected: "2350dc773dc43fd6ed0b012588f3ff295fb358106a0291a7dc59c57427f5780f"},
		},
		Shapes:     map[string]int64{"server-per-line": 13080, "tool-per-line": 9},
		Classes:    map[string]Class{},
		Buckets:    map[string]Bucket{},
		Skipped:    Skipped{Count: 2, First: []SkippedLine{{File: "server_tools.jsonl.gz", Line: 17, Error: `invalid JSON <img src=x onerror=alert(1)>`}}},
		ClassOrder: ClassOrder(),
	}
	if verified {
		r.Manifest = "pinned"
	} else {
		for i := range r.Inputs {
			r.Inputs[i].Expected, r.Inputs[i].OK = "", false
		}
	}
	ours := map[string][2]int64{
		"gg:url-endpoint": {31870, 22880}, "gg:command-string": {23847, 13619}, "gg:money-amount": {15230, 4449},
		"gg:credential-value": {14753, 3418}, "gg:filesystem-path": {5569, 1690},
	}
	for id, pub := range published.Classes {
		o := ours[id]
		r.Classes[id] = Class{Row: Row{Tools: o[0], Percent: Percent(o[0], r.Tools), Required: o[1]}, Published: pub,
			DeltaTools: o[0] - pub.Tools, DeltaRequired: o[1] - pub.Required}
	}
	for id, pub := range published.Buckets {
		n := pub + 3
		r.Buckets[id] = Bucket{Tools: n, Percent: Percent(n, r.Tools), Published: pub, PublishedPercent: Percent(pub, r.Tools), DeltaTools: 3, NonNormative: true}
	}
	for _, f := range classify.SurfaceFigures() {
		s := Surface{ID: f.ID, Title: f.Title, Rule: f.Rule, NonNormative: true}
		if f.CountServers {
			s.Tools, s.Servers, s.Published, s.PublishedPercent, s.PublishedServers = 70110, 11602, 67423, 29.373, 11520
		} else {
			s.Tools, s.Published, s.PublishedPercent = 1012, 995, 0.43
		}
		s.Percent = Percent(s.Tools, r.Tools)
		r.Surface = append(r.Surface, s)
	}
	r.Sensitivity = sampleSensitivity(r)
	return r
}

func renderHTML(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteHTMLContent(t *testing.T) {
	page := renderHTML(t, sampleReport(false))
	for _, want := range []string{
		`id="unverified"`, "<strong>UNVERIFIED</strong>",
		`class="verdict warn"`, `<span class="word">NOT REPRODUCED</span>`,
		`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#34;quoted&#34;`,
		`invalid JSON &lt;img src=x onerror=alert(1)&gt;`,
		`id="class-chart"`,
		"3071866184521fb36aeac6ac715687ed4bf99b9b034646da61176f54a3dfa9d8", "(not checked)",
		"server-per-line", "tool-per-line",
		`<section class="nonnormative" id="buckets">`, `<section class="nonnormative" id="surface">`,
		"229,539 tools on 13,089 servers",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Every surface rule is printed in full (escaped as the page escapes it).
	for _, f := range classify.SurfaceFigures() {
		if !strings.Contains(html.UnescapeString(page), f.Rule) {
			t.Errorf("page lacks the rule of %s", f.ID)
		}
	}
	// Self-contained: no script, nothing fetched, and a policy that forbids
	// both should a later change add one.
	// Text is escaped, so every '<' left starts a real tag.
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if m := regexp.MustCompile(`<[a-zA-Z][^>]*\s(src|href|srcset|action)\s*=`).FindString(page); m != "" {
		t.Errorf("page refers to a resource: %s", m)
	}
	if !strings.Contains(page, `content="default-src 'none'; style-src 'unsafe-inline'"`) {
		t.Error("page lacks its Content-Security-Policy")
	}

	verified := sampleReport(true)
	page = renderHTML(t, verified)
	if strings.Contains(page, `id="unverified"`) || !strings.Contains(page, `class="verdict bad"`) {
		t.Error("a verified NOT REPRODUCED report shows the UNVERIFIED banner or the wrong verdict style")
	}
	for _, want := range []string{`<span class="badv">MISMATCH</span>`, `<span class="good">ok</span>`, "<code>pinned</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("verified page lacks %q", want)
		}
	}
	verified.Verdict = VerdictReproduced
	if page = renderHTML(t, verified); !strings.Contains(page, `class="verdict ok"`) {
		t.Error("a REPRODUCED report is not styled as such")
	}
}

var rectRE = regexp.MustCompile(`<rect x="([0-9.]+)" y="([0-9.]+)" width="([^"]*)" height="([0-9.]+)" fill="#[0-9a-f]+" data-series="([a-z-]+)" data-value="(-?[0-9]+)">`)
var groupRE = regexp.MustCompile(`<g data-class="([^"]+)">`)

// TestWriteHTMLChart checks the chart's geometry: classes in ClassOrder,
// four bars per class on one scale, required parts within their bars.
func TestWriteHTMLChart(t *testing.T) {
	r := sampleReport(true)
	// A reordered ClassOrder must reorder the chart.
	r.ClassOrder = []string{"gg:filesystem-path", "gg:url-endpoint", "gg:command-string", "gg:money-amount", "gg:credential-value"}
	// A negative count (a hand-edited report.json) must not become a
	// negative width, which is an SVG error.
	fs := r.Classes["gg:filesystem-path"]
	fs.Required = -5
	r.Classes["gg:filesystem-path"] = fs
	page := renderHTML(t, r)
	var order []string
	for _, m := range groupRE.FindAllStringSubmatch(page, -1) {
		order = append(order, m[1])
	}
	if strings.Join(order, " ") != strings.Join(r.ClassOrder, " ") {
		t.Errorf("chart order %q, want %q", order, r.ClassOrder)
	}
	bars := rectRE.FindAllStringSubmatch(page, -1)
	if len(bars) != 4*len(r.ClassOrder) {
		t.Fatalf("%d bars, want %d", len(bars), 4*len(r.ClassOrder))
	}
	// The scale is taken from the longest bar, where rounding the widths to
	// 0.1 matters least.
	var scale float64
	var longest int64
	for _, m := range bars {
		if v, _ := strconv.ParseInt(m[6], 10, 64); v > longest {
			w, _ := strconv.ParseFloat(m[3], 64)
			longest, scale = v, w/float64(v)
		}
	}
	width := map[string]float64{}
	for i, m := range bars {
		w, err := strconv.ParseFloat(m[3], 64)
		if err != nil || w < 0 || w > chartBarMaxW {
			t.Errorf("bar %d: width %q", i, m[3])
		}
		v, _ := strconv.ParseInt(m[6], 10, 64)
		width[order[i/4]+" "+m[5]] = w
		if v <= 0 {
			if w != 0 {
				t.Errorf("bar %d (%s = %d) has width %v", i, m[5], v, w)
			}
			continue
		}
		if math.Abs(w-float64(v)*scale) > 0.2 {
			t.Errorf("bar %d (%s = %d): width %v, want %.1f on the common scale", i, m[5], v, w, float64(v)*scale)
		}
	}
	for _, id := range r.ClassOrder {
		if width[id+" ours-required"] > width[id+" ours"] || width[id+" published-required"] > width[id+" published"] {
			t.Errorf("%s: a required part is wider than its bar", id)
		}
	}
	if got := width["gg:url-endpoint published"]; got < chartBarMaxW*0.8 {
		t.Errorf("the longest bar is %v wide: the scale wastes the chart", got)
	}
}

// TestWriteHTMLEmpty renders a report with nothing in it: no class order,
// no counts, no inputs. The chart falls back to the published order with
// empty bars.
func TestWriteHTMLEmpty(t *testing.T) {
	page := renderHTML(t, &Report{})
	if n := len(groupRE.FindAllString(page, -1)); n != len(ClassOrder()) {
		t.Errorf("%d chart rows, want %d", n, len(ClassOrder()))
	}
	for _, m := range rectRE.FindAllStringSubmatch(page, -1) {
		if m[3] != "0" {
			t.Errorf("empty report has a %s bar of width %s", m[5], m[3])
		}
	}
	if strings.Contains(page, `id="surface"`) {
		t.Error("a report without surface figures shows their section")
	}
}

func TestNiceStepAndGroup(t *testing.T) {
	for _, tc := range []struct{ top, want int64 }{{1, 1}, {7, 1}, {8, 2}, {31880, 5000}, {35001, 10000}, {50, 10}, {71, 20}, {229539, 50000}} {
		t.Run(fmt.Sprint("niceStep ", tc.top), func(t *testing.T) {
			if got := niceStep(tc.top); got != tc.want {
				t.Errorf("niceStep(%d) = %d, want %d", tc.top, got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {229539, "229,539"}, {-1234567, "-1,234,567"}} {
		t.Run(fmt.Sprint("group ", tc.n), func(t *testing.T) {
			if got := group(tc.n); got != tc.want {
				t.Errorf("group(%d) = %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// needChromium skips without the browser, except in CI, which installs it:
// there a missing browser must not pass for a passing test.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		testenv.Missing(t, "%s is missing (%v): install the Debian package chromium to run the rendering test", chromiumPath, err)
	}
}

// chartProbe is added to the test's copy of the page only: it writes where
// the chart was laid out into the DOM, which --dump-dom prints. The report
// itself has no script.
const chartProbe = `<script>(function(){var e=document.getElementById("class-chart");var o=document.createElement("pre");o.id="chart-rect";` +
	`if(e){var r=e.getBoundingClientRect();o.textContent=JSON.stringify([r.left,r.top,r.width,r.height,window.devicePixelRatio]);}else{o.textContent="null";}` +
	`document.body.appendChild(o);})();</script>`

type chromiumResult struct {
	dom     string
	shot    image.Image
	console []string
}

// runChromium loads the page headless, once, and returns the DOM after load,
// a 1200×1600 screenshot and the console messages it logged.
func runChromium(t *testing.T, page string) chromiumResult {
	t.Helper()
	dir := t.TempDir()
	htmlPath, pngPath := filepath.Join(dir, "page.html"), filepath.Join(dir, "shot.png")
	if err := os.WriteFile(htmlPath, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	// A generous bound: under a loaded CI machine Chromium alone can take
	// tens of seconds to start; the bound is only there to end a hung run.
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumPath, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--force-device-scale-factor=1", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+pngPath, "--window-size=1200,1600", "--dump-dom", "--enable-logging=stderr", "--v=0",
		(&url.URL{Scheme: "file", Path: htmlPath}).String())
	// The browser writes caches and crash reports under HOME; keep them
	// in the test's directory.
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_CACHE_HOME="+dir)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	var res chromiumResult
	res.dom = stdout.String()
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "CONSOLE(") || strings.Contains(line, "Uncaught") {
			res.console = append(res.console, line)
		}
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	defer f.Close()
	if res.shot, err = png.Decode(f); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return res
}

// TestHTMLRendersInChromium loads report.html in headless Chromium and
// checks that the chart is drawn where the page laid it out and that the
// page logs nothing to the console (an invalid SVG attribute, a blocked
// fetch or a script error all would).
func TestHTMLRendersInChromium(t *testing.T) {
	needChromium(t)
	t.Run("report", func(t *testing.T) {
		t.Parallel()
		page := renderHTML(t, sampleReport(false))
		// Let the probe run: the report's policy forbids scripts.
		page = withProbe(t, page, chartProbe)
		res := runChromium(t, page)
		if len(res.console) > 0 {
			t.Errorf("console messages:\n%s", strings.Join(res.console, "\n"))
		}
		m := regexp.MustCompile(`<pre id="chart-rect">([^<]*)</pre>`).FindStringSubmatch(res.dom)
		if m == nil {
			t.Fatalf("the probe did not run; DOM:\n%.2000s", res.dom)
		}
		var rect []float64
		if err := json.Unmarshal([]byte(m[1]), &rect); err != nil || len(rect) != 5 {
			t.Fatalf("chart rect %q: %v", m[1], err)
		}
		dpr := rect[4]
		x0, y0 := int(math.Ceil(rect[0]*dpr))+1, int(math.Ceil(rect[1]*dpr))+1
		x1, y1 := int((rect[0]+rect[2])*dpr)-1, int((rect[1]+rect[3])*dpr)-1
		b := res.shot.Bounds()
		if rect[2] < 500 || rect[3] < 200 || x0 < b.Min.X || y0 < b.Min.Y || x1 > b.Max.X || y1 > b.Max.Y {
			t.Fatalf("chart at %v (device pixel ratio %v) is not inside the %v screenshot", rect[:4], dpr, b)
		}
		counts := chartPixels(res.shot, image.Rect(x0, y0, x1, y1))
		area := (x1 - x0) * (y1 - y0)
		t.Logf("chart %v: %d of %d pixels drawn; per bar colour %v", rect[:4], counts["drawn"], area, counts)
		if counts["drawn"] < area/10 {
			t.Errorf("only %d of %d pixels in the chart's area differ from the background", counts["drawn"], area)
		}
		// Each colour must cover more than its legend swatch (14×14):
		// the bars themselves are drawn.
		for _, c := range []string{colourOurs, colourOursRequired, colourPublished, colourPublishedRequired} {
			if counts[c] < 1000 {
				t.Errorf("colour %s covers %d pixels in the chart: its bars are not drawn", c, counts[c])
			}
		}
	})
	// The console check must be able to fail: a chart with a negative bar
	// width, the likeliest rendering bug, logs an error.
	t.Run("console detector", func(t *testing.T) {
		t.Parallel()
		res := runChromium(t, `<!DOCTYPE html><html><body><svg width="100" height="50"><rect width="-5" height="10"/></svg></body></html>`)
		if len(res.console) == 0 {
			t.Error("an invalid SVG width logged no console message: the console check cannot fail")
		}
	})
}

// chartPixels counts, inside r, the pixels that differ from the white
// background ("drawn") and those of each bar colour.
func chartPixels(img image.Image, r image.Rectangle) map[string]int {
	type rgb struct{ r, g, b int }
	parse := func(hex string) rgb {
		v, _ := strconv.ParseUint(hex[1:], 16, 32)
		return rgb{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
	}
	colours := map[string]rgb{}
	for _, c := range []string{colourOurs, colourOursRequired, colourPublished, colourPublishedRequired} {
		colours[c] = parse(c)
	}
	abs := func(x int) int { return max(x, -x) }
	counts := map[string]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			R, G, B, _ := img.At(x, y).RGBA()
			p := rgb{int(R >> 8), int(G >> 8), int(B >> 8)}
			if 255-p.r+255-p.g+255-p.b > 24 {
				counts["drawn"]++
			}
			for name, c := range colours {
				if abs(p.r-c.r) <= 6 && abs(p.g-c.g) <= 6 && abs(p.b-c.b) <= 6 {
					counts[name]++
				}
			}
		}
	}
	return counts
}
