package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
	"github.com/atlas-reproduce/atlas-reproduce/report/tooldiff"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a run of each of a few seeded synthetic releases: the first
// from synth, each next from synth.Next of the one before, a month apart.
type fixture struct {
	dir   string
	runs  []string // run folders, in date order
	data  []string // data folders
	ids   []string
	dates []string
	edits [][]synth.Edit // edits[i] made release i from i-1
}

const fixtureTools = 3000

func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{dir: t.TempDir(), edits: make([][]synth.Edit, n)}
	for i := range n {
		data := filepath.Join(f.dir, fmt.Sprintf("data-%d", i))
		if i == 0 {
			opt := synth.DefaultOptions()
			opt.Tools, opt.Servers, opt.Workers = fixtureTools, 171, 2
			if _, err := synth.Write(ctx, data, opt); err != nil {
				t.Fatal(err)
			}
		} else {
			e, err := synth.Next(ctx, f.data[i-1], data, 16, uint64(40+i))
			if err != nil {
				t.Fatal(err)
			}
			f.edits[i] = e
		}
		f.data = append(f.data, data)
		// Ids that are not dates, and dates that do not sort as the ids.
		id, date := fmt.Sprintf("r%d", n-i), fmt.Sprintf("2026-%02d-15", 11+i-12*((11+i-1)/12))
		if i >= 2 {
			date = fmt.Sprintf("2027-%02d-15", i-1)
		}
		f.ids, f.dates = append(f.ids, id), append(f.dates, date)
		f.runs = append(f.runs, runRelease(t, data, filepath.Join(f.dir, "run-"+id), id, date))
	}
	return f
}

// runRelease runs the census in data as release id of date.
func runRelease(t *testing.T, data, out, id, date string) string {
	t.Helper()
	m, err := hashverify.ReadSHA256Sums(filepath.Join(data, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	opt := pipeline.Options{Data: data, Out: out, Manifest: m, ManifestName: "SHA256SUMS", Workers: 2, ReleaseID: id, ReleaseDate: date}
	if _, err := pipeline.Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	return out
}

// fileState is every file under a folder: its bytes' hash, and its inode
// and modification time, which a file rewritten with the same bytes would
// not keep.
func fileState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fmt.Sprintf("%s ino %d mtime %d", hex.EncodeToString(h[:]), fi.Sys().(*syscall.Stat_t).Ino, fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// under keeps the entries of state under the folder prefix.
func under(state map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range state {
		if strings.HasPrefix(k, prefix+string(filepath.Separator)) {
			out[k] = v
		}
	}
	return out
}

func equalStates(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %s changed (%s → %s)", what, k, v, b[k])
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: %s appeared", what, k)
		}
	}
}

func readRows(t *testing.T, dataset string) []report.HistoryRow {
	t.Helper()
	var rows []report.HistoryRow
	if err := tables.ReadHistory(context.Background(), filepath.Join(dataset, TableFile), func(r *report.HistoryRow) error {
		rows = append(rows, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}

func i64(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}

// TestHistoryOfReleases adds four seeded synthetic releases to a dataset,
// out of order and in two goes: each partition holds its run's files byte
// for byte and is left alone when others are added; history.parquet holds,
// by date, each release's classes as its report.json counts them and, from
// the second release on, what diff says of it beside the release before,
// which is what synth.Next's edits made.
func TestHistoryOfReleases(t *testing.T) {
	f := newFixture(t, 4)
	ds := filepath.Join(t.TempDir(), "dataset")
	ctx := context.Background()

	res, err := Add(ctx, Options{Dataset: ds, Runs: []string{f.runs[3], f.runs[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Added, []string{f.ids[3], f.ids[0]}) || !res.HistoryChanged {
		t.Errorf("first add: %+v", res)
	}
	before := fileState(t, ds)
	if res, err = Add(ctx, Options{Dataset: ds, Runs: []string{f.runs[2], f.runs[1]}}); err != nil {
		t.Fatal(err)
	}
	after := fileState(t, ds)
	for _, i := range []int{0, 3} {
		p := partitionPrefix + f.ids[i]
		equalStates(t, "adding releases between them: partition "+p, under(before, p), under(after, p))
	}
	var order []string
	for _, r := range res.Releases {
		order = append(order, r.ID)
	}
	if !slices.Equal(order, f.ids) {
		t.Errorf("releases in the order %v, want by date %v", order, f.ids)
	}
	for i, run := range f.runs {
		for _, name := range PartitionFiles {
			a, _ := os.ReadFile(filepath.Join(run, name))
			b, _ := os.ReadFile(filepath.Join(ds, partitionPrefix+f.ids[i], name))
			if len(a) == 0 || string(a) != string(b) {
				t.Errorf("release %s: the partition's %s is not the run's", f.ids[i], name)
			}
		}
	}

	// Built in one go, or a release at a time, the history is the same
	// file; adding the last release compares it with the one before it
	// alone, the other pairs taken from the history before.
	whole := filepath.Join(t.TempDir(), "whole")
	if res, err = Add(ctx, Options{Dataset: whole, Runs: f.runs}); err != nil || res.Compared != 3 || res.Reused != 0 {
		t.Fatalf("all at once: %+v, %v", res, err)
	}
	step := filepath.Join(t.TempDir(), "step")
	if _, err = Add(ctx, Options{Dataset: step, Runs: f.runs[:3]}); err != nil {
		t.Fatal(err)
	}
	if res, err = Add(ctx, Options{Dataset: step, Runs: f.runs[3:]}); err != nil || res.Compared != 1 || res.Reused != 2 {
		t.Fatalf("the last added: %+v, %v", res, err)
	}
	for _, name := range []string{TableFile, MarkdownFile, HTMLFile} {
		for _, other := range []string{step, ds} {
			a, _ := os.ReadFile(filepath.Join(whole, name))
			b, _ := os.ReadFile(filepath.Join(other, name))
			if len(a) == 0 || string(a) != string(b) {
				t.Errorf("%s built in one go differs from %s's", name, other)
			}
		}
	}

	rows := readRows(t, ds)
	if len(rows) != 7*len(f.runs) {
		t.Fatalf("%d rows, want 7 for each of %d releases", len(rows), len(f.runs))
	}
	for i, run := range f.runs {
		r, err := report.ReadFile(filepath.Join(run, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var td *report.ToolDiff
		if i > 0 {
			if td, err = tooldiff.Compare(ctx, f.runs[i-1], run, tooldiff.Options{}); err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int64{}
			for _, e := range f.edits[i] {
				k := e.Kind
				if k == synth.EditGained {
					k = synth.EditChanged
				}
				kinds[k]++
			}
			if td.Tools.Added != kinds[synth.EditAdded] || td.Tools.Removed != kinds[synth.EditRemoved] || td.Tools.Changed != kinds[synth.EditChanged] {
				t.Errorf("release %s: diff %+v, edits %v", f.ids[i], td.Tools, kinds)
			}
		}
		got := rows[7*i : 7*i+7]
		var want []string
		for j, id := range append(report.ClassOrder(), "account_identity", "raw_content_blob") {
			normative := j < 5
			w := fmt.Sprintf("%s %s %s %v tools %d of %d on %d servers", f.ids[i], f.dates[i], id, normative, r.Classes[id].Tools, r.Tools, r.Servers)
			req, pct := "null", r.Buckets[id].Percent
			if normative {
				req, pct = strconv.FormatInt(r.Classes[id].Required, 10), r.Classes[id].Percent
			} else {
				w = fmt.Sprintf("%s %s %s %v tools %d of %d on %d servers", f.ids[i], f.dates[i], id, normative, r.Buckets[id].Tools, r.Tools, r.Servers)
			}
			w += fmt.Sprintf(" required %s percent %.3f", req, pct)
			change := "added null removed null changed null gained null lost null"
			if td != nil {
				change = fmt.Sprintf("added %d removed %d changed %d", td.Tools.Added, td.Tools.Removed, td.Tools.Changed)
				if normative {
					change += fmt.Sprintf(" gained %d lost %d", td.ClassesGained[id], td.ClassesLost[id])
				} else {
					change += " gained null lost null"
				}
			}
			want = append(want, w+" "+change)
		}
		for j, g := range got {
			line := fmt.Sprintf("%s %s %s %v tools %d of %d on %d servers required %s percent %.3f added %s removed %s changed %s gained %s lost %s",
				g.Release, g.Date, g.Class, g.Normative, g.Tools, g.LiveTools, g.Servers, i64(g.Required), g.Percent,
				i64(g.ToolsAdded), i64(g.ToolsRemoved), i64(g.ToolsChanged), i64(g.Gained), i64(g.Lost))
			if line != want[j] {
				t.Errorf("history.parquet row\n got %s\nwant %s", line, want[j])
			}
		}
	}
	// The seeded edits gave some tool gg:credential-value: the gains are
	// there to be counted, not all zero.
	var gained int64
	for _, r := range rows {
		if r.Class == "gg:credential-value" && r.Gained != nil {
			gained += *r.Gained
		}
	}
	if gained == 0 {
		t.Error("no release gained gg:credential-value: the gained column went untested")
	}
	md, _ := os.ReadFile(filepath.Join(ds, MarkdownFile))
	page, _ := os.ReadFile(filepath.Join(ds, HTMLFile))
	for i, id := range f.ids {
		if !strings.Contains(string(md), "| `"+id+"` | "+f.dates[i]+" |") {
			t.Errorf("history.md has no row of release %s", id)
		}
		if !strings.Contains(string(page), `data-release="`+id+`"`) {
			t.Errorf("history.html charts no point of release %s", id)
		}
	}
}

// TestHistoryIdempotentAndRefusing: the same runs again change no byte
// (nor a file's inode or time); another run under an id the dataset holds
// is refused, leaving every byte, unless Replace, which rewrites that
// partition alone; runs that name no release, or the same one twice, are
// refused before anything is written.
func TestHistoryIdempotentAndRefusing(t *testing.T) {
	f := newFixture(t, 3)
	ds := filepath.Join(t.TempDir(), "dataset")
	ctx := context.Background()
	if _, err := Add(ctx, Options{Dataset: ds, Runs: f.runs}); err != nil {
		t.Fatal(err)
	}
	before := fileState(t, ds)
	res, err := Add(ctx, Options{Dataset: ds, Runs: f.runs})
	if err != nil {
		t.Fatal(err)
	}
	if res.HistoryChanged || len(res.Unchanged) != 3 || len(res.Added)+len(res.Replaced) != 0 || res.Compared != 0 || res.Reused != 2 {
		t.Errorf("the same runs again: %+v", res)
	}
	equalStates(t, "the same runs again", before, fileState(t, ds))

	// The last release's data run under the first release's id and date.
	other := runRelease(t, f.data[2], filepath.Join(f.dir, "other"), f.ids[0], f.dates[0])
	fresh := runRelease(t, f.data[2], filepath.Join(f.dir, "fresh"), "r9", "2028-01-15")
	unnamed := filepath.Join(f.dir, "unnamed")
	{
		m, _ := hashverify.ReadSHA256Sums(filepath.Join(f.data[1], "SHA256SUMS"))
		if _, err := pipeline.Run(ctx, pipeline.Options{Data: f.data[1], Out: unnamed, Manifest: m, ManifestName: "SHA256SUMS", Workers: 2}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		runs []string
		want string
	}{
		{"another run of a release there", []string{other}, "--replace"},
		{"with one that would be added", []string{fresh, other}, "--replace"},
		{"a run naming no release", []string{unnamed}, "--release-date"},
		{"one release twice", []string{f.runs[1], f.runs[1]}, "both of release " + f.ids[1]},
		{"not a run", []string{t.TempDir()}, "report.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Add(ctx, Options{Dataset: ds, Runs: tc.runs})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			equalStates(t, "a refused add", before, fileState(t, ds))
		})
	}

	res, err = Add(ctx, Options{Dataset: ds, Runs: []string{other}, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Replaced, []string{f.ids[0]}) || !res.HistoryChanged || res.Compared != 1 || res.Reused != 1 {
		t.Errorf("replace: %+v", res)
	}
	after := fileState(t, ds)
	for _, id := range f.ids[1:] {
		p := partitionPrefix + id
		equalStates(t, "replacing another release: partition "+p, under(before, p), under(after, p))
	}
	r, err := report.ReadFile(filepath.Join(ds, partitionPrefix+f.ids[0], "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := report.ReadFile(filepath.Join(other, "report.json"))
	rows := readRows(t, ds)
	if r.Tools != want.Tools || rows[0].Release != f.ids[0] || rows[0].LiveTools != want.Tools {
		t.Errorf("the replaced partition counts %d tools, history %d; the run %d", r.Tools, rows[0].LiveTools, want.Tools)
	}
}

// TestHistoryInDuckDB reads the dataset as a DuckDB user does: the hive
// partitions give every release's tools with a release column, whose
// counts are each report.json's, and history.parquet's shares are the
// reports' too.
func TestHistoryInDuckDB(t *testing.T) {
	f := newFixture(t, 3)
	ds := filepath.Join(t.TempDir(), "dataset")
	if _, err := Add(context.Background(), Options{Dataset: ds, Runs: f.runs}); err != nil {
		t.Fatal(err)
	}
	glob := filepath.Join(ds, "release=*", "tools.parquet")
	rows := testenv.DuckDB(t, `SELECT release::VARCHAR AS release, count(*)::VARCHAR AS tools, count(*) FILTER (credential_value)::VARCHAR AS credential,
		count(*) FILTER (url_endpoint_required)::VARCHAR AS url_required
		FROM read_parquet('`+glob+`', hive_partitioning = true) GROUP BY ALL ORDER BY release`)
	shares := testenv.DuckDB(t, `SELECT release, strftime(date, '%Y-%m-%d') AS date, percent, tools::VARCHAR AS tools, gained::VARCHAR AS gained
		FROM read_parquet('`+filepath.Join(ds, TableFile)+`') WHERE class = 'gg:credential-value' ORDER BY date`)
	if len(rows) != len(f.runs) || len(shares) != len(f.runs) {
		t.Fatalf("DuckDB read %d releases from the partitions and %d from history.parquet, want %d:\n%v\n%v", len(rows), len(shares), len(f.runs), rows, shares)
	}
	byID := map[string]map[string]any{}
	for _, r := range rows {
		byID[fmt.Sprint(r["release"])] = r
	}
	for i, run := range f.runs {
		r, err := report.ReadFile(filepath.Join(run, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		got := byID[f.ids[i]]
		want := map[string]any{"release": f.ids[i], "tools": strconv.FormatInt(r.Tools, 10),
			"credential": strconv.FormatInt(r.Classes["gg:credential-value"].Tools, 10), "url_required": strconv.FormatInt(r.Classes["gg:url-endpoint"].Required, 10)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("DuckDB over the partitions: %v, report.json: %v", got, want)
		}
		s := shares[i]
		if s["release"] != f.ids[i] || s["date"] != f.dates[i] || s["percent"] != r.Classes["gg:credential-value"].Percent || s["tools"] != want["credential"] {
			t.Errorf("DuckDB over history.parquet: %v, report.json %s %s %v", s, f.ids[i], f.dates[i], r.Classes["gg:credential-value"])
		}
		if (i == 0) != (s["gained"] == nil) {
			t.Errorf("release %d gained %v: null for the first release only", i, s["gained"])
		}
	}
}
