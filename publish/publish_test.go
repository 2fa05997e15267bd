package publish

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// census writes a synthetic census of n tools and runs it; it returns the
// data and run folders.
func census(t *testing.T, n int, seed uint64) (string, string) {
	t.Helper()
	data, run := t.TempDir(), t.TempDir()
	opt := synth.DefaultOptions()
	opt.Tools, opt.Servers, opt.Seed = n, max(n/18, 1), seed
	if _, err := synth.Write(context.Background(), data, opt); err != nil {
		t.Fatal(err)
	}
	m, err := hashverify.ReadSHA256Sums(filepath.Join(data, release.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Data: data, Out: run, Manifest: m, ManifestName: release.SumsFile, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	return data, run
}

func options(data, run, out string) Options {
	return Options{Data: data, Run: run, Out: out, Date: "2026-11-30", PublicationDate: "2026-12-01"}
}

func TestZipSameBytesWhateverMtimesAndZone(t *testing.T) {
	data, run := census(t, 1500, 7)
	out1 := filepath.Join(t.TempDir(), "dep")
	r1, err := Write(context.Background(), options(data, run, out1))
	if err != nil {
		t.Fatal(err)
	}
	// The same files elsewhere, with other mtimes, written in another
	// time zone.
	copyDir := t.TempDir()
	for i, n := range CensusFiles() {
		b, err := os.ReadFile(filepath.Join(data, n))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(copyDir, n)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		when := time.Date(2001+i, 2, 3, 4, 5, 6, 0, time.UTC)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	saved := time.Local
	time.Local = time.FixedZone("UTC+14", 14*3600)
	t.Cleanup(func() { time.Local = saved })
	out2 := filepath.Join(t.TempDir(), "dep")
	r2, err := Write(context.Background(), options(copyDir, run, out2))
	if err != nil {
		t.Fatal(err)
	}
	if r1.Zip != "mcp-atlas-census-20261130.zip" || r2.Zip != r1.Zip {
		t.Fatalf("zips %q and %q", r1.Zip, r2.Zip)
	}
	z1, _ := os.ReadFile(filepath.Join(out1, r1.Zip))
	z2, _ := os.ReadFile(filepath.Join(out2, r2.Zip))
	if len(z1) == 0 || !bytes.Equal(z1, z2) {
		t.Fatalf("the two zips differ (%d and %d bytes)", len(z1), len(z2))
	}
	if r1.ZipBytes != int64(len(z1)) {
		t.Errorf("ZipBytes %d, the zip has %d", r1.ZipBytes, len(z1))
	}
	for _, f := range []string{SumsFile, ZenodoFile, CitationFile, ReleaseFile} {
		a, _ := os.ReadFile(filepath.Join(out1, f))
		b, _ := os.ReadFile(filepath.Join(out2, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the two deposits", f)
		}
	}
	// The members: the snapshot's three, in order, stamped with the census
	// date, each the file's very bytes.
	zr, err := zip.NewReader(bytes.NewReader(z1), int64(len(z1)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 3 {
		t.Fatalf("%d members", len(zr.File))
	}
	for i, m := range zr.File {
		if m.Name != CensusFiles()[i] || !m.Modified.UTC().Equal(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("member %d: %s at %v", i, m.Name, m.Modified)
		}
		rc, _ := m.Open()
		got, _ := io.ReadAll(rc)
		rc.Close()
		want, _ := os.ReadFile(filepath.Join(data, m.Name))
		if !bytes.Equal(got, want) {
			t.Errorf("member %s is not the file's bytes", m.Name)
		}
	}
}

func TestRefusesARunOfAnotherRelease(t *testing.T) {
	data, _ := census(t, 600, 1)
	_, otherRun := census(t, 600, 2)
	out := filepath.Join(t.TempDir(), "dep")
	_, err := Write(context.Background(), options(data, otherRun, out))
	if err == nil || !strings.Contains(err.Error(), "the run is not of this release") {
		t.Fatalf("error %v", err)
	}
	// The zip was written before the check failed: nothing of it shows.
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".outset-") {
			t.Errorf("a failed publish left %s", e.Name())
		}
	}
}

func TestRefusesBadOptions(t *testing.T) {
	data, run := census(t, 300, 3)
	for _, tc := range []struct {
		name string
		opt  func(*Options)
		want string
	}{
		{"no census date", func(o *Options) { o.Date = "" }, "--date"},
		{"bad date", func(o *Options) { o.Date = "2026-13-01" }, "not YYYY-MM-DD"},
		{"bad name", func(o *Options) { o.Name = "../x" }, "letters, digits"},
		{"bad DOI", func(o *Options) { o.PreviousDOI = "zenodo 1" }, "not a DOI"},
		{"existing deposit", func(o *Options) { os.WriteFile(filepath.Join(o.Out, "x"), nil, 0o644) }, "not empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := options(data, run, t.TempDir())
			tc.opt(&o)
			if _, err := Write(context.Background(), o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestHoldToThePublishedTable(t *testing.T) {
	data, run := census(t, 1200, 5)
	out := filepath.Join(t.TempDir(), "dep")
	if _, err := Write(context.Background(), Options{Data: data, Run: run, Out: out, Date: "2026-11-30", PreviousDOI: "10.5281/zenodo.99"}); err != nil {
		t.Fatal(err)
	}
	zen, _ := os.ReadFile(filepath.Join(out, ZenodoFile))
	for _, w := range []string{`"isNewVersionOf"`, `"10.5281/zenodo.99"`, SnapshotDOI, "gg:url-endpoint", `"version": "2026-11-30"`} {
		if !bytes.Contains(zen, []byte(w)) {
			t.Errorf(".zenodo.json lacks %s", w)
		}
	}
	// A second run over the deposit itself, verified against its sums.
	dep, err := Find(out)
	if err != nil || dep == nil {
		t.Fatalf("Find: %v, %v", dep, err)
	}
	if err := dep.Verify(); err != nil {
		t.Fatal(err)
	}
	run2 := t.TempDir()
	r, err := pipeline.Run(context.Background(), pipeline.Options{Data: out, Out: run2, Manifest: dep.Sums, ManifestName: SumsFile, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	v, err := dep.Hold(r)
	if err != nil || v.Verdict != report.VerdictReproduced || len(v.Differences) != 0 {
		t.Fatalf("verdict %+v, %v", v, err)
	}

	// A published count one off is named.
	off := *r
	off.Classes = map[string]report.Class{}
	for k, c := range r.Classes {
		off.Classes[k] = c
	}
	c := off.Classes["gg:url-endpoint"]
	c.Tools++
	off.Classes["gg:url-endpoint"] = c
	off.Servers--
	v, _ = dep.Hold(&off)
	if v.Verdict != report.VerdictNotReproduced || len(v.Differences) != 2 ||
		!strings.HasPrefix(v.Differences[0], "servers ") || !strings.HasPrefix(v.Differences[1], "gg:url-endpoint ") {
		t.Errorf("verdict %+v", v)
	}

	// classes.parquet that says otherwise than report.json.
	var buf bytes.Buffer
	if err := tables.WriteClasses(&buf, &off); err != nil {
		t.Fatal(err)
	}
	if err := CheckClasses(writeTemp(t, buf.Bytes()), dep.Table); err == nil || !strings.Contains(err.Error(), "gg:url-endpoint") {
		t.Errorf("classes.parquet one off: %v", err)
	}

	// One byte of the zip changed: a hash mismatch.
	zp := filepath.Join(out, "mcp-atlas-census-20261130.zip")
	b, _ := os.ReadFile(zp)
	b[len(b)/2] ^= 1
	os.WriteFile(zp, b, 0o644)
	var mm *hashverify.MismatchError
	if err := dep.Verify(); !errors.As(err, &mm) || mm.Name != "mcp-atlas-census-20261130.zip" {
		t.Errorf("a changed zip: %v", err)
	}
}

func writeTemp(t *testing.T, b []byte) string {
	p := filepath.Join(t.TempDir(), ClassesFile)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCensusDateFromTheRun: the run's release_date names the zip and the
// version; a --date that says otherwise is refused.
func TestCensusDateFromTheRun(t *testing.T) {
	data, _ := census(t, 300, 9)
	m, err := hashverify.ReadSHA256Sums(filepath.Join(data, release.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Data: data, Out: run, Manifest: m, ManifestName: release.SumsFile, Workers: 1, ReleaseID: "atlas-2026-11b", ReleaseDate: "2026-11-29"}); err != nil {
		t.Fatal(err)
	}
	o := options(data, run, filepath.Join(t.TempDir(), "dep"))
	if _, err := Write(context.Background(), o); err == nil || !strings.Contains(err.Error(), "2026-11-29") {
		t.Errorf("a --date the run contradicts: %v", err)
	}
	o.Date = ""
	res, err := Write(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	zen, _ := os.ReadFile(filepath.Join(o.Out, ZenodoFile))
	rel, _ := os.ReadFile(filepath.Join(o.Out, ReleaseFile))
	if res.Zip != "mcp-atlas-census-20261129.zip" || !bytes.Contains(zen, []byte(`"version": "atlas-2026-11b"`)) || !bytes.Contains(rel, []byte(`"release_id": "atlas-2026-11b"`)) {
		t.Errorf("zip %s\n%s\n%s", res.Zip, zen, rel)
	}
}
