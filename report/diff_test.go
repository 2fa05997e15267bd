package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// update rewrites golden files instead of comparing with them. It is the
// package's only -update flag: other tests in report should use it too.
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func readReport(t *testing.T, path string) *Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ReadJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// releases are two synthetic report.json files: the published census
// reproduced (old) and an unverified later release (new), whose known
// changes TestDiffKnownChanges spells out.
func releases(t *testing.T) *DiffResult {
	dir := filepath.Join("testdata", "diff")
	d := Diff(readReport(t, filepath.Join(dir, "old.json")), readReport(t, filepath.Join(dir, "new.json")))
	d.Old.Label, d.New.Label = "old.json", "new.json"
	return d
}

func TestDiffGolden(t *testing.T) {
	d := releases(t)
	var md, js bytes.Buffer
	if err := d.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		got  []byte
	}{{"diff.golden.md", md.Bytes()}, {"diff.golden.json", js.Bytes()}} {
		t.Run(g.file, func(t *testing.T) {
			path := filepath.Join("testdata", "diff", g.file)
			if *update {
				if err := os.WriteFile(path, g.got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./report -run TestDiffGolden -update to create it)", err)
			}
			if !bytes.Equal(g.got, want) {
				t.Errorf("%s differs from the output:\n%s\n(rerun with -update and review the diff)", path, g.got)
			}
		})
	}
}

// TestDiffKnownChanges checks the diff of the two releases against changes
// worked out by hand from the two files, so the goldens are not trusted
// blindly.
func TestDiffKnownChanges(t *testing.T) {
	d := releases(t)
	if d.Tools.Change != (Change{229539, 241020, 11481}) || d.Servers.Change != (Change{13089, 13502, 413}) ||
		d.Properties != (Change{1843210, 1950112, 106902}) {
		t.Errorf("totals: tools %+v servers %+v properties %+v", d.Tools, d.Servers, d.Properties)
	}
	if d.Old.Verdict != "REPRODUCED" || !d.Old.Verified || d.Old.Manifest != "pinned" ||
		d.New.Verdict != "UNVERIFIED" || d.New.Verified || d.New.Snapshot != "2027-04-12" {
		t.Errorf("sides: old %+v new %+v", d.Old, d.New)
	}
	type row struct {
		id                  string
		change              int64
		points              float64
		oldPct, newPct      float64
		requiredOld, reqNew int64
	}
	want := []row{
		{"gg:url-endpoint", 1620, 0.010, 13.889, 13.899, 22891, 24010},
		{"gg:command-string", 0, -0.495, 10.389, 9.894, 13619, 13619},
		{"gg:money-amount", -229, -0.411, 6.635, 6.224, 4449, 4400},
		{"gg:credential-value", 1347, 0.253, 6.427, 6.68, 3418, 3700},
		{"gg:filesystem-path", 0, -0.115, 2.426, 2.311, 1690, 1690},
	}
	if len(d.Classes) != len(want) {
		t.Fatalf("%d classes, want %d", len(d.Classes), len(want))
	}
	for i, w := range want {
		c := d.Classes[i]
		if c.ID != w.id || c.Tools.Change.Change != w.change || c.Tools.ChangePoints != w.points ||
			c.Tools.OldPercent != w.oldPct || c.Tools.NewPercent != w.newPct ||
			c.Required != (Change{w.requiredOld, w.reqNew, w.reqNew - w.requiredOld}) || c.Missing != "" {
			t.Errorf("class %d = %+v, want %+v", i, c, w)
		}
	}
	wantBuckets := []BucketDiff{
		{ID: "account_identity", Tools: Share{Change{117085, 121000, 3915}, 51.009, 50.203, -0.806}, NonNormative: true},
		{ID: "raw_content_blob", Tools: Share{Change{44429, 47000, 2571}, 19.356, 19.5, 0.144}, NonNormative: true},
	}
	if !slices.Equal(d.Buckets, wantBuckets) {
		t.Errorf("buckets = %+v\nwant %+v", d.Buckets, wantBuckets)
	}
	wantSurface := []SurfaceDiff{
		{ID: "high-consequence-outbound", Title: "High-consequence × outbound-network tools",
			Tools: Share{Change{0, 1100, 1100}, 0, 0.456, 0.456}, Missing: "old", NonNormative: true},
		{ID: "read-retrieval", Title: "Read/retrieval tools",
			Tools: Share{Change{70110, 74000, 3890}, 30.544, 30.703, 0.159}, Servers: Change{11602, 12011, 409}, NonNormative: true},
	}
	if !slices.Equal(d.Surface, wantSurface) {
		t.Errorf("surface = %+v\nwant %+v", d.Surface, wantSurface)
	}
}

// TestDiffRowsOnOneSide covers classes that only one report has, and the
// published order as the fallback when neither report records one.
func TestDiffRowsOnOneSide(t *testing.T) {
	old := &Report{Classes: map[string]Class{
		"gg:filesystem-path": {Row: Row{Tools: 5}},
		"gg:url-endpoint":    {Row: Row{Tools: 7}},
		"zz:dropped":         {Row: Row{Tools: 3, Required: 1}},
	}}
	new := &Report{Classes: map[string]Class{
		"gg:url-endpoint":    {Row: Row{Tools: 9}},
		"gg:filesystem-path": {Row: Row{Tools: 5}},
		"aa:added":           {Row: Row{Tools: 2}},
	}}
	d := Diff(old, new)
	var ids, miss []string
	for _, c := range d.Classes {
		ids = append(ids, c.ID)
		miss = append(miss, c.Missing)
	}
	if want := []string{"gg:url-endpoint", "gg:filesystem-path", "aa:added", "zz:dropped"}; !slices.Equal(ids, want) {
		t.Errorf("class order = %q, want %q", ids, want)
	}
	if want := []string{"", "", "old", "new"}; !slices.Equal(miss, want) {
		t.Errorf("missing = %q, want %q", miss, want)
	}
	if c := d.Classes[3]; c.Tools.Change != (Change{3, 0, -3}) || c.Required != (Change{1, 0, -1}) {
		t.Errorf("dropped class = %+v", c)
	}
	var md bytes.Buffer
	if err := d.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"| `aa:added` (not in old) | – | – | 2 | 0.000 | – | – | – | 0 | – |",
		"| `zz:dropped` (not in new) | 3 | 0.000 | – | – | – | – | 1 | – | – |",
	} {
		if !strings.Contains(md.String(), line+"\n") {
			t.Errorf("Markdown lacks %q:\n%s", line, md.String())
		}
	}
}

// TestDiffMarkdownCells checks that labels cannot break the tables or the
// inline code they are written in.
func TestDiffMarkdownCells(t *testing.T) {
	d := Diff(&Report{Classes: map[string]Class{}, Verdict: "NOT|REPRODUCED\nx"}, &Report{Classes: map[string]Class{}, Verified: true})
	d.Old.Label = "a|b`c``d.json"
	var md bytes.Buffer
	if err := d.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Old: ``` a\\|b`c``d.json ```.", "| Verdict | NOT\\|REPRODUCED x | – | |", "| Verified | no | yes | |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	if n := strings.Count(md.String(), "UNVERIFIED"); n != 1 {
		t.Errorf("%d UNVERIFIED notes, want 1 (the old side only)", n)
	}
}

// TestDiffJSONRoundTrip checks that the JSON output reads back into the same
// result, so consumers of --json see every field.
func TestDiffJSONRoundTrip(t *testing.T) {
	d := releases(t)
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back DiffResult
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if got, want := back.Classes, d.Classes; !slices.Equal(got, want) {
		t.Errorf("classes after a round trip = %+v, want %+v", got, want)
	}
	if back.Old != d.Old || back.New != d.New || back.Tools != d.Tools || !slices.Equal(back.Surface, d.Surface) {
		t.Errorf("round trip lost fields: %+v", back)
	}
}
