package publish

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
)

// Deposit is a deposit made by Write as found in a folder (a fetched
// record, say).
type Deposit struct {
	// Dir is the folder.
	Dir string
	// Sums is its SHA256SUMS.
	Sums hashverify.Manifest
	// SumsSHA256 is the SHA-256 of the SHA256SUMS file as Find read it:
	// what the deposit was verified by.
	SumsSHA256 string
	// Table is its published report.json, nil for a release that
	// publishes no counts.
	Table *report.Report
}

// Find recognises a deposit in dir: a SHA256SUMS beside a release.json.
// It returns nil and no error for a folder that holds none (the frozen
// snapshot's zips, say).
func Find(dir string) (*Deposit, error) {
	for _, n := range []string{SumsFile, ReleaseFile} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err != nil || !fi.Mode().IsRegular() {
			return nil, nil
		}
	}
	p := filepath.Join(dir, SumsFile)
	f, err := outset.OpenFile(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The manifest is hashed on the one read that parses it.
	hr := hashverify.NewReader(f)
	m, err := hashverify.ParseSHA256Sums(hr, p)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, hr); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &Deposit{Dir: dir, Sums: m, SumsSHA256: hr.Sum()}, nil
}

// Verify checks every file SHA256SUMS lists that lies loose in the folder
// against it, and that each census file it lists is loose or in one of
// its zips (the run verifies those as it reads them); then reads the
// published table, when the deposit has one, and holds classes.parquet to
// report.json. A hash mismatch is a *hashverify.MismatchError.
func (d *Deposit) Verify() error {
	var errs []error
	census := map[string]bool{}
	for _, n := range CensusFiles() {
		census[n] = true
	}
	for _, name := range slices.Sorted(maps.Keys(d.Sums)) {
		p := filepath.Join(d.Dir, name)
		sum, err := openreg.Sum(p, sha256.New())
		if errors.Is(err, os.ErrNotExist) {
			if census[name] {
				continue // inside the zip, verified by the run
			}
			errs = append(errs, fmt.Errorf("%s: listed in %s but not in the deposit", name, SumsFile))
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := d.Sums.Check(name, sum); err != nil {
			errs = append(errs, err)
		}
	}
	for _, n := range CensusFiles() {
		if _, ok := d.Sums[n]; !ok {
			errs = append(errs, fmt.Errorf("%s: the deposit's %s lists no SHA-256 for it", n, SumsFile))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("deposit %s: verification failed: %w", d.Dir, errors.Join(errs...))
	}
	rp := filepath.Join(d.Dir, ReportFile)
	if _, err := os.Stat(rp); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, listed := d.Sums[ReportFile]; !listed {
		return fmt.Errorf("%s: the deposit's %s does not list it, so it is not its published table", rp, SumsFile)
	}
	if _, listed := d.Sums[ClassesFile]; !listed {
		return fmt.Errorf("%s: the deposit's %s does not list %s", rp, SumsFile, ClassesFile)
	}
	b, err := openreg.ReadFile(rp, 256<<20)
	if err != nil {
		return err
	}
	rep, err := report.ReadJSON(strings.NewReader(string(b)))
	if err != nil {
		return fmt.Errorf("%s: %w", rp, err)
	}
	d.Table = rep
	return nil
}

// UploadFiles are the deposit's files that go into a record's bucket, in
// upload order: its zip first.
func (d *Deposit) UploadFiles() ([]string, error) {
	var zips []string
	for name := range d.Sums {
		if strings.HasSuffix(name, ".zip") {
			zips = append(zips, name)
		}
	}
	if len(zips) != 1 {
		return nil, fmt.Errorf("deposit %s: its %s lists %d zips, not one", d.Dir, SumsFile, len(zips))
	}
	return UploadFiles(zips[0]), nil
}

// Verdict is a run held to a deposit's published table.
type Verdict struct {
	// Verdict is report.VerdictReproduced when every count equals the
	// table's, report.VerdictNotReproduced otherwise, and empty for a
	// release that publishes no counts.
	Verdict string
	// Differences name each count that differs, as "what ours, published
	// theirs".
	Differences []string
}

// Hold holds run, a run over the deposit's files, to the deposit's
// published table: every count of report.json, and classes.parquet must
// say the same as report.json. Call Verify first.
func (d *Deposit) Hold(run *report.Report) (*Verdict, error) {
	if d.Table == nil {
		return &Verdict{}, nil
	}
	var diffs []string
	if err := CheckClasses(filepath.Join(d.Dir, ClassesFile), d.Table); err != nil {
		var ce *ClassesError
		if !errors.As(err, &ce) {
			return nil, err
		}
		diffs = append(diffs, ce.Differences...)
	}
	diffs = append(diffs, Compare(run, d.Table)...)
	v := &Verdict{Verdict: report.VerdictReproduced, Differences: diffs}
	if len(diffs) > 0 {
		v.Verdict = report.VerdictNotReproduced
	}
	if v.Differences == nil {
		v.Differences = []string{}
	}
	return v, nil
}

// Compare names every count of run that differs from the published
// table pub: tools, servers, properties, record shapes, input records,
// each class's tools and required, each bucket, each surface figure.
func Compare(run, pub *report.Report) []string {
	var diffs []string
	num := func(what string, ours, theirs int64) {
		if ours != theirs {
			diffs = append(diffs, fmt.Sprintf("%s %d, published %d", what, ours, theirs))
		}
	}
	if !run.Verified || run.Skipped.Count > 0 {
		diffs = append(diffs, "the run did not verify every input or skipped lines")
	}
	num("tools", run.Tools, pub.Tools)
	num("servers", run.Servers, pub.Servers)
	num("properties", run.Properties, pub.Properties)
	for _, k := range union(run.Shapes, pub.Shapes) {
		num("shape "+k, run.Shapes[k], pub.Shapes[k])
	}
	inputName := func(in report.Input) string { return in.Name }
	ri, pi := byKey(run.Inputs, inputName), byKey(pub.Inputs, inputName)
	for _, k := range union(ri, pi) {
		num(k+" records", ri[k].Records, pi[k].Records)
		if ri[k].SHA256 != pi[k].SHA256 {
			diffs = append(diffs, fmt.Sprintf("%s SHA-256 %s, published %s", k, ri[k].SHA256, pi[k].SHA256))
		}
	}
	order := append([]string{}, pub.ClassOrder...)
	for _, k := range union(run.Classes, pub.Classes) {
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	for _, k := range order {
		rc, okr := run.Classes[k]
		pc, okp := pub.Classes[k]
		if okr != okp {
			diffs = append(diffs, fmt.Sprintf("%s present in %s only", k, map[bool]string{true: "the run", false: "the published table"}[okr]))
			continue
		}
		if rc.Tools != pc.Tools || rc.Required != pc.Required {
			diffs = append(diffs, fmt.Sprintf("%s %d/%d required, published %d/%d", k, rc.Tools, rc.Required, pc.Tools, pc.Required))
		}
	}
	for _, k := range union(run.Buckets, pub.Buckets) {
		num(k, run.Buckets[k].Tools, pub.Buckets[k].Tools)
	}
	surfaceID := func(s report.Surface) string { return s.ID }
	rs, ps := byKey(run.Surface, surfaceID), byKey(pub.Surface, surfaceID)
	for _, k := range union(rs, ps) {
		num(k+" tools", rs[k].Tools, ps[k].Tools)
		num(k+" servers", rs[k].Servers, ps[k].Servers)
	}
	return diffs
}

// byKey maps each of xs by its key (the last of equal keys wins), so two
// lists can be compared entry by entry with union.
func byKey[V any](xs []V, key func(V) string) map[string]V {
	m := make(map[string]V, len(xs))
	for _, x := range xs {
		m[key(x)] = x
	}
	return m
}

func union[V any](a, b map[string]V) []string {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return slices.Sorted(maps.Keys(m))
}

// ClassesError is a classes.parquet that does not say what its report.json
// says.
type ClassesError struct {
	File        string
	Differences []string
}

func (e *ClassesError) Error() string {
	return fmt.Sprintf("%s disagrees with report.json: %s", e.File, strings.Join(e.Differences, "; "))
}

// CheckClasses reads classes.parquet at path and holds each row to rep:
// a class's tools and required, a bucket's tools. A row or a class missing
// on either side is a difference too. The differences come back as a
// *ClassesError; an unreadable file is another error.
func CheckClasses(path string, rep *report.Report) error {
	rows, err := tables.ReadClasses(path)
	if err != nil {
		return err
	}
	var diffs []string
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Label] = true
		if r.Normative {
			c, ok := rep.Classes[r.Label]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("classes.parquet has class %s, report.json has not", r.Label))
			case c.Tools != r.Tools || !r.HasRequired || c.Required != r.Required:
				diffs = append(diffs, fmt.Sprintf("classes.parquet says %s %d/%d required, report.json %d/%d", r.Label, r.Tools, r.Required, c.Tools, c.Required))
			}
			continue
		}
		b, ok := rep.Buckets[r.Label]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("classes.parquet has bucket %s, report.json has not", r.Label))
		case b.Tools != r.Tools:
			diffs = append(diffs, fmt.Sprintf("classes.parquet says %s %d, report.json %d", r.Label, r.Tools, b.Tools))
		}
	}
	for _, k := range append(slices.Sorted(maps.Keys(rep.Classes)), slices.Sorted(maps.Keys(rep.Buckets))...) {
		if !seen[k] {
			diffs = append(diffs, fmt.Sprintf("report.json has %s, classes.parquet has not", k))
		}
	}
	if len(diffs) > 0 {
		return &ClassesError{File: path, Differences: diffs}
	}
	return nil
}

// VerdictFile is where WriteVerdict puts a run's verdict against a
// deposit, beside the run's own outputs.
const VerdictFile = "deposit-verdict.json"

// WriteVerdict writes v into the run's output folder dir as VerdictFile,
// naming the deposit's SHA256SUMS it was held to, so that the verdict
// outlives the terminal it was printed on.
func (d *Deposit) WriteVerdict(dir string, v *Verdict) error {
	sums := d.SumsSHA256
	body := struct {
		Verdict     string   `json:"verdict"`
		Differences []string `json:"differences"`
		Published   bool     `json:"published_table"`
		SumsSHA256  string   `json:"deposit_sha256sums_sha256"`
	}{v.Verdict, v.Differences, d.Table != nil, sums}
	if body.Differences == nil {
		body.Differences = []string{}
	}
	b, err := json.MarshalIndent(body, "", "  ")
	if err != nil {
		return err
	}
	set, err := outset.Open(dir)
	if err != nil {
		return err
	}
	defer set.Close()
	if err := set.WriteFile(VerdictFile, append(b, '\n')); err != nil {
		return err
	}
	return set.Commit()
}

// Belongs refuses a deposit that is not of the release and run named on
// the command line: its published report.json must be the run's very
// file, and the census files it lists those the run read (and, when the
// release has its own SHA256SUMS, those the release lists). A deposit
// left by an earlier upload is resumed only for the release it was
// written for.
func (d *Deposit) Belongs(data, run string) error {
	rep, b, err := readRunReport(run)
	if err != nil {
		return err
	}
	want, listed := d.Sums[ReportFile]
	if !listed {
		return fmt.Errorf("deposit %s publishes no %s: it is not a deposit of the run %s", d.Dir, ReportFile, run)
	}
	if got := sha256Hex(b); got != want {
		return fmt.Errorf("deposit %s holds another release's table: its %s has SHA-256 %s, the run %s's has %s; write this release's deposit into a new --out folder", d.Dir, ReportFile, want, run, got)
	}
	sums := map[string]string{}
	for _, n := range CensusFiles() {
		sums[n] = d.Sums[n]
	}
	if err := holdRunToData(rep, sums, run); err != nil {
		return fmt.Errorf("deposit %s: %w", d.Dir, err)
	}
	if err := holdReleaseSums(data, sums); err != nil {
		return fmt.Errorf("deposit %s is not of the release %s: %w", d.Dir, data, err)
	}
	return nil
}
