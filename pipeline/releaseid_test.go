package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
)

// TestReleaseOfRun: every run names its release and the day its census was
// taken, in report.json and in the footer of each of its three tables:
// from release.json (the crawl's end, in UTC), the snapshot (unchecked
// files with no other claim), or --release-id and --release-date for a
// release whose inputs do not say; a date that contradicts the inputs,
// and an id that cannot be a folder name, are refused.
func TestReleaseOfRun(t *testing.T) {
	data, sums := smallCensus(t, 200)
	crawl := t.TempDir()
	for _, name := range []string{release.ToolsFile, release.ServersFile, release.CandidatesFile} {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(crawl, name), b, 0o644)
	}
	// The crawl ended on 4 November at 00:30 in UTC+2: 3 November, UTC.
	rel, _ := json.Marshal(release.Release{Started: "2026-11-03T20:00:00+02:00", Finished: "2026-11-04T00:30:00+02:00"})
	os.WriteFile(filepath.Join(crawl, release.File), rel, 0o644)
	// A release whose publisher stated its id and date in release.json,
	// and one whose stated date is not a date.
	stated, bad := t.TempDir(), t.TempDir()
	for _, dir := range []string{stated, bad} {
		for _, name := range []string{release.ToolsFile, release.ServersFile, release.CandidatesFile} {
			b, _ := os.ReadFile(filepath.Join(data, name))
			os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
	}
	os.WriteFile(filepath.Join(stated, release.File), []byte(`{"release_id": "2026-11b", "release_date": "2026-11-05", "finished": "2026-11-30T10:00:00Z"}`), 0o644)
	os.WriteFile(filepath.Join(bad, release.File), []byte(`{"release_date": "5 November", "finished": "2026-11-30T10:00:00Z"}`), 0o644)

	for _, tc := range []struct {
		name     string
		edit     func(*Options)
		id, date string
		err      string
	}{
		{"release by other sums, not said", func(o *Options) {}, "", "", ""},
		{"release dated", func(o *Options) { o.ReleaseDate = "2026-11-12" }, "2026-11-12", "2026-11-12", ""},
		{"release named and dated", func(o *Options) { o.ReleaseID, o.ReleaseDate = "2026-11", "2026-11-12" }, "2026-11", "2026-11-12", ""},
		{"unchecked files are the snapshot", func(o *Options) { o.Manifest, o.NoVerify = nil, true }, "2026-10-12", "2026-10-12", ""},
		{"unchecked files dated otherwise", func(o *Options) { o.Manifest, o.NoVerify, o.ReleaseDate = nil, true, "2026-01-31" }, "2026-01-31", "2026-01-31", ""},
		{"crawl release", func(o *Options) { o.Data, o.Manifest, o.NoVerify = crawl, nil, true }, "2026-11-03", "2026-11-03", ""},
		{"crawl release renamed", func(o *Options) { o.Data, o.Manifest, o.NoVerify, o.ReleaseID = crawl, nil, true, "nov" }, "nov", "2026-11-03", ""},
		{"crawl release misdated", func(o *Options) { o.Data, o.Manifest, o.NoVerify, o.ReleaseDate = crawl, nil, true, "2026-11-04" }, "", "", "the census is of 2026-11-03, as release.json"},
		{"release.json states id and date", func(o *Options) { o.Data, o.Manifest, o.NoVerify = stated, nil, true }, "2026-11b", "2026-11-05", ""},
		{"release.json states no date", func(o *Options) { o.Data, o.Manifest, o.NoVerify = bad, nil, true }, "", "", `release.json: release date "5 November"`},
		{"bad date", func(o *Options) { o.ReleaseDate = "2026-11-31" }, "", "", "--release-date"},
		{"id with a slash", func(o *Options) { o.ReleaseID = "a/b" }, "", "", "--release-id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := runOpts(t, data, sums)
			tc.edit(&opt)
			r, err := Run(context.Background(), opt)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				assertNoOutputs(t, opt.Out)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			back, err := report.ReadFile(filepath.Join(opt.Out, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if r.ReleaseID != tc.id || r.ReleaseDate != tc.date || back.ReleaseID != tc.id || back.ReleaseDate != tc.date {
				t.Errorf("release %q of %q (report.json %q of %q), want %q of %q", r.ReleaseID, r.ReleaseDate, back.ReleaseID, back.ReleaseDate, tc.id, tc.date)
			}
			js, _ := os.ReadFile(filepath.Join(opt.Out, "report.json"))
			if has := strings.Contains(string(js), `"release_id"`); has != (tc.id != "") {
				t.Errorf("report.json has release_id: %v", has)
			}
			for _, name := range []string{"tools.parquet", "properties.parquet", "classes.parquet"} {
				pf, err := file.OpenParquetFile(filepath.Join(opt.Out, name), false)
				if err != nil {
					t.Fatal(err)
				}
				kv := pf.MetaData().KeyValueMetadata()
				for key, want := range map[string]string{tables.MetaReleaseID: tc.id, tables.MetaReleaseDate: tc.date} {
					v := kv.FindValue(key)
					switch {
					case want == "" && v != nil:
						t.Errorf("%s: metadata %s = %q, want none", name, key, *v)
					case want != "" && (v == nil || *v != want):
						t.Errorf("%s: metadata %s = %v, want %q", name, key, v, want)
					}
				}
				pf.Close()
			}
		})
	}
}
