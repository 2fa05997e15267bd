package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/gzip"
	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// readTable reads a Parquet file of a run back.
func readTable(t *testing.T, path string) arrow.Table {
	t.Helper()
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// columnText renders a column's values, for comparing two files.
func columnText(tbl arrow.Table, i int) string {
	var b strings.Builder
	for _, c := range tbl.Column(i).Data().Chunks() {
		b.WriteString(c.String())
	}
	return b.String()
}

func isSensitivityColumn(name string) bool {
	for _, v := range sensitivity.Variants() {
		if strings.HasPrefix(name, v+"_") {
			return true
		}
	}
	return false
}

// TestSensitivityLeavesNormativeFiguresAlone runs the same census with and
// without the sensitivity variants: every normative figure must be
// byte-identical (report.json without its "sensitivity" object, the other
// Parquet tables, every other tools.parquet column), and the variants'
// figures must equal CPython's literal definitions summed per tool.
func TestSensitivityLeavesNormativeFiguresAlone(t *testing.T) {
	defer goleak.VerifyNone(t)
	data, sums := smallCensus(t, 6000)
	on, off := runOpts(t, data, sums), runOpts(t, data, sums)
	off.NoSensitivity = true
	rOn, err := Run(context.Background(), on)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), off); err != nil {
		t.Fatal(err)
	}
	read := func(dir, name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var jsOn, jsOff map[string]json.RawMessage
	if err := json.Unmarshal(read(on.Out, "report.json"), &jsOn); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(read(off.Out, "report.json"), &jsOff); err != nil {
		t.Fatal(err)
	}
	if _, ok := jsOff["sensitivity"]; ok {
		t.Error("report.json has sensitivity figures with NoSensitivity")
	}
	if len(jsOn) != len(jsOff)+1 {
		t.Errorf("report.json keys: %d with the sensitivity figures, %d without", len(jsOn), len(jsOff))
	}
	for k, v := range jsOff {
		if !bytes.Equal(jsOn[k], v) {
			t.Errorf("report.json %q differs with the sensitivity figures:\n%s\nwithout:\n%s", k, jsOn[k], v)
		}
	}
	// The whole file too: with the object dropped, the same bytes.
	rOff := *rOn
	rOff.Sensitivity = nil
	var buf bytes.Buffer
	if err := rOff.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), read(off.Out, "report.json")) {
		t.Error("report.json without its sensitivity object is not byte-identical to the run without sensitivity")
	}
	for _, name := range []string{"properties.parquet", "classes.parquet"} {
		if !bytes.Equal(read(on.Out, name), read(off.Out, name)) {
			t.Errorf("%s differs with the sensitivity figures", name)
		}
	}
	tOn, tOff := readTable(t, filepath.Join(on.Out, "tools.parquet")), readTable(t, filepath.Join(off.Out, "tools.parquet"))
	defer tOn.Release()
	defer tOff.Release()
	if tOn.NumCols() != tOff.NumCols() || tOn.NumRows() != tOff.NumRows() {
		t.Fatalf("tools.parquet shapes differ")
	}
	sensCols := 0
	// Sum the sensitivity columns, to check them against the report below.
	colSums := map[string]int64{}
	for i := 0; i < int(tOn.NumCols()); i++ {
		name := tOn.Schema().Field(i).Name
		if isSensitivityColumn(name) {
			sensCols++
			for _, c := range tOn.Column(i).Data().Chunks() {
				b := c.(*array.Boolean)
				for j := 0; j < b.Len(); j++ {
					if b.Value(j) {
						colSums[name]++
					}
				}
			}
			if txt := columnText(tOff, i); strings.Contains(txt, "true") {
				t.Errorf("%s: true without the sensitivity figures", name)
			}
			continue
		}
		if columnText(tOn, i) != columnText(tOff, i) {
			t.Errorf("tools.parquet column %s differs with the sensitivity figures", name)
		}
	}
	if sensCols != 15 {
		t.Errorf("%d sensitivity columns, want 15", sensCols)
	}

	// CPython, per tool, summed.
	want := pythonSensitivity(t, filepath.Join(data, release.ToolsFile))
	s := rOn.Sensitivity
	if s == nil || !s.NonNormative {
		t.Fatalf("sensitivity figures %+v", s)
	}
	var total int64
	for _, id := range report.ClassOrder() {
		col := strings.ReplaceAll(strings.TrimPrefix(id, "gg:"), "-", "_")
		check := func(what string, got, want int64, column string) {
			t.Helper()
			if got != want {
				t.Errorf("%s %s = %d, CPython %d", what, id, got, want)
			}
			if column != "" && colSums[column] != got {
				t.Errorf("tools.parquet %s sums to %d, report says %d", column, colSums[column], got)
			}
		}
		check("camel_case", s.CamelCase[id].Tools, want["camel_case"][id][0], "camel_case_"+col)
		check("camel_case required", s.CamelCase[id].Required, want["camel_case"][id][1], "")
		check("word_split", s.WordSplit[id].Tools, want["word_split"][id][0], "word_split_"+col)
		check("word_split required", s.WordSplit[id].Required, want["word_split"][id][1], "")
		check("deep", s.Deep[id].Tools, want["deep"][id][0], "deep_"+col)
		total += s.CamelCase[id].Tools + s.WordSplit[id].Tools + s.Deep[id].Tools
	}
	if total == 0 {
		t.Error("the variants add nothing to any class: the comparison proves nothing")
	}
	md := read(on.Out, "report.md")
	for _, w := range []string{"## Sensitivity of the lexical rule (non-normative)", "word_split over-counts", "- **deep**: "} {
		if !bytes.Contains(md, []byte(w)) {
			t.Errorf("report.md lacks %q", w)
		}
	}
	if bytes.Contains(read(off.Out, "report.md"), []byte("## Sensitivity")) {
		t.Error("report.md has a sensitivity section without the figures")
	}
}

// pythonSensitivity runs sensitivity/testdata/sensitivity.py on a tools
// file and sums, per variant and class, the tools and required tools added.
func pythonSensitivity(t *testing.T, path string) map[string]map[string][2]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Python3(t), filepath.Join(testenv.Root(), "label", "sensitivity", "testdata", "sensitivity.py"), referencePy)
	cmd.Stdin = zr
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sensitivity.py: %v\n%s", err, stderr.String())
	}
	sums := map[string]map[string][2]int64{"camel_case": {}, "word_split": {}, "deep": {}}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var tool struct {
			Sensitivity map[string]struct {
				Classes         []string `json:"classes"`
				RequiredClasses []string `json:"required_classes"`
			} `json:"sensitivity"`
		}
		if err := json.Unmarshal(line, &tool); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		for v, a := range tool.Sensitivity {
			for _, id := range a.Classes {
				c := sums[v][id]
				c[0]++
				sums[v][id] = c
			}
			for _, id := range a.RequiredClasses {
				c := sums[v][id]
				c[1]++
				sums[v][id] = c
			}
		}
	}
	return sums
}
