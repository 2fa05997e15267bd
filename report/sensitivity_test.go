package report

import (
	"bytes"
	"encoding/json"
	"image"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/aggregate"
)

// sampleSensitivity gives r (from sampleReport) figures in which every
// variant adds something to every class, word_split the most.
func sampleSensitivity(r *Report) *Sensitivity {
	var c aggregate.Sensitivity
	for i := range 5 {
		c.Tools[0][i], c.Required[0][i] = int64(1000*(i+1)), int64(400*(i+1))
		c.Tools[1][i], c.Required[1][i] = int64(2500*(i+1)), int64(900*(i+1))
		c.Tools[2][i] = int64(700 * (i + 1))
	}
	return NewSensitivity(r, &c)
}

func TestSensitivityJSON(t *testing.T) {
	r := sampleReport(true)
	r.Sensitivity = sampleSensitivity(r)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Sensitivity map[string]json.RawMessage `json:"sensitivity"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if string(got.Sensitivity["non_normative"]) != "true" {
		t.Errorf("non_normative = %s", got.Sensitivity["non_normative"])
	}
	for _, v := range []string{"camel_case", "word_split", "deep"} {
		t.Run(v, func(t *testing.T) {
			var m map[string]map[string]float64
			if err := json.Unmarshal(got.Sensitivity[v], &m); err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			if len(m) != 5 {
				t.Errorf("%s has %d classes", v, len(m))
			}
			fs := m["gg:filesystem-path"] // bit 1: the second class
			_, hasReq := fs["required"]
			if hasReq != (v != "deep") {
				t.Errorf("%s: required present %v", v, hasReq)
			}
			want := map[string]float64{"camel_case": 2000, "word_split": 5000, "deep": 1400}[v]
			norm := float64(r.Classes["gg:filesystem-path"].Tools)
			if fs["tools"] != want || fs["percent_of_class"] != float64(int(want*10000/norm+0.5))/100 || fs["percent"] != Percent(int64(want), r.Tools) {
				t.Errorf("%s gg:filesystem-path = %v (normative %v)", v, fs, norm)
			}
		})
	}
}

func TestSensitivityMarkdown(t *testing.T) {
	r := sampleReport(true)
	r.Sensitivity = nil
	var without bytes.Buffer
	if err := r.WriteMarkdown(&without); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(without.String(), "Sensitivity") {
		t.Error("a report without sensitivity figures has a sensitivity section")
	}
	r.Sensitivity = sampleSensitivity(r)
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	sec := strings.Index(md, "## Sensitivity of the lexical rule (non-normative)")
	if sec < 0 || sec < strings.Index(md, "| `gg:filesystem-path` |") || sec > strings.Index(md, "## Contextual buckets") {
		t.Fatalf("the section is missing or not right after the class table:\n%s", md)
	}
	for _, want := range []string{
		// filesystem-path: bit 1, normative 5,569.
		"| `gg:filesystem-path` | 5,569 | +2,000 (+35.91%) | +800 | +5,000 (+89.78%) | +1,800 | +1,400 (+25.14%) |",
		"word_split over-counts by design",
		"- **camel_case**: ", "- **word_split**: ", "- **deep**: ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// The rest of the file is unchanged by the section.
	if rest := md[:sec-1] + md[strings.Index(md, "\n## Contextual buckets"):]; rest != without.String() {
		t.Errorf("the sensitivity section changed the rest of report.md:\n%s", rest)
	}
}

func TestSensitivityHTML(t *testing.T) {
	r := sampleReport(true)
	r.Sensitivity = nil
	if strings.Contains(renderHTML(t, r), `id="sensitivity"`) {
		t.Error("a report without sensitivity figures has a sensitivity section")
	}
	r.Sensitivity = sampleSensitivity(r)
	page := renderHTML(t, r)
	sec := strings.Index(page, `<section class="nonnormative" id="sensitivity">`)
	if sec < 0 || sec < strings.Index(page, `<table id="classes">`) || sec > strings.Index(page, "<h2>Inputs</h2>") {
		t.Fatal("the section is missing or not after the class table")
	}
	for _, want := range []string{
		`<svg id="sensitivity-chart"`, "word_split over-counts by design", `<span class="badge">non-normative</span>`,
		`<td class="n">+5,000 (+89.78%)</td>`, `<strong>deep</strong>: `,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// Every bar carries its value; each class row has the normative count
	// and the three additions.
	bars := regexp.MustCompile(`<g data-sensitivity-class="gg:filesystem-path">(?s:.*?)</g>`).FindAllString(page, -1)
	if len(bars) != 1 {
		t.Fatalf("%d sensitivity chart groups for gg:filesystem-path", len(bars))
	}
	bars = append([]string{""}, bars...)
	for _, want := range []string{`data-variant="normative" data-value="5569"`, `data-variant="camel_case" data-value="2000"`,
		`data-variant="word_split" data-value="5000"`, `data-variant="deep" data-value="1400"`} {
		if !strings.Contains(bars[1], want) {
			t.Errorf("sensitivity chart lacks %s", want)
		}
	}
	// Bar widths: proportional to the values, on one scale.
	w := regexp.MustCompile(`data-variant="(\w+)" data-value="(\d+)"`).FindAllStringSubmatchIndex(bars[1], -1)
	widths := regexp.MustCompile(`width="([0-9.]+)" height="18"`).FindAllStringSubmatch(bars[1], -1)
	if len(w) != 6 || len(widths) != 6 {
		t.Fatalf("%d bars, %d widths", len(w), len(widths))
	}
	scale := 0.0
	for i := range w {
		v, _ := strconv.ParseFloat(bars[1][w[i][4]:w[i][5]], 64)
		x, _ := strconv.ParseFloat(widths[i][1], 64)
		if scale == 0 {
			scale = x / v
		}
		if d := x - v*scale; d > 0.2 || d < -0.2 {
			t.Errorf("bar %d: width %v for value %v, scale %v", i, x, v, scale)
		}
	}
}

func TestSensitivityChartRendersInChromium(t *testing.T) {
	needChromium(t)
	r := sampleReport(true)
	r.Sensitivity = sampleSensitivity(r)
	page := renderHTML(t, r)
	// Show the section alone, at the top of the screenshot.
	page = strings.Replace(page, "</style>", ".wrap > *:not(#sensitivity) { display: none; }\n</style>", 1)
	res := runChromium(t, page)
	if len(res.console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(res.console, "\n"))
	}
	counts := map[string]int{}
	b := res.shot.Bounds()
	want := append([]string{sensColourBase}, sensColours[:]...)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			for _, c := range want {
				if near(res.shot, x, y, c) {
					counts[c]++
				}
			}
		}
	}
	t.Logf("pixels per colour: %v", counts)
	for _, c := range want {
		if counts[c] < 1000 {
			t.Errorf("colour %s covers %d pixels: its bars are not drawn", c, counts[c])
		}
	}
}

func near(img image.Image, x, y int, hex string) bool {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	R, G, B, _ := img.At(x, y).RGBA()
	d := func(a uint32, b uint64) bool { return int(a>>8)-int(b) <= 6 && int(b)-int(a>>8) <= 6 }
	return d(R, v>>16) && d(G, v>>8&0xff) && d(B, v&0xff)
}
