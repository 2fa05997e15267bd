// Package publish makes a deposit of a census release in the form the
// frozen snapshot was published in: the census files in one zip, their
// SHA-256 pins, the release's provenance, the table of counts a run made
// of them, and the metadata a Zenodo record needs. A later reproduction is
// held to that deposit's own table (see Hold), as the snapshot is held to
// the spec's.
package publish

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// DefaultName is the stem of the deposit's zip when Options.Name is empty,
// after the snapshot's mcp-atlas-milestone-a-baseline-<date>.zip.
const DefaultName = "mcp-atlas-census"

// The files of a deposit besides the zip.
const (
	// SumsFile is the sha256sum manifest of every other file.
	SumsFile = "SHA256SUMS"
	// ReleaseFile is the release's provenance.
	ReleaseFile = "release.json"
	// ReportFile and ClassesFile are the published table: the run's
	// counts, and the class table as Parquet.
	ReportFile  = "report.json"
	ClassesFile = "classes.parquet"
	// ZenodoFile is the record's metadata, in the deposition API's form;
	// it is sent as metadata, not uploaded as a file.
	ZenodoFile = ".zenodo.json"
	// CitationFile is the Citation File Format description.
	CitationFile = "CITATION.cff"
)

// CensusFiles are the files of the snapshot's layout, in the zip's order.
func CensusFiles() []string {
	return []string{release.ServersFile, release.ToolsFile, release.CandidatesFile}
}

// Options say what to publish.
type Options struct {
	// Data is the release: a folder of census files (or of zips holding
	// them), or a zip, as run's --data.
	Data string
	// Run is the folder of a run over Data: its report.json and
	// classes.parquet become the published table.
	Run string
	// Out is the deposit folder; it must not hold a deposit already.
	Out string
	// Name is the zip's stem; empty means DefaultName.
	Name string
	// Date is the census date (YYYY-MM-DD); empty means the UTC date the
	// crawl started, from the release's release.json.
	Date string
	// PublicationDate is .zenodo.json's publication_date (YYYY-MM-DD);
	// empty means today (UTC) by Now.
	PublicationDate string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Version is the record's version; empty means the census date.
	Version string
	// Title of the record; empty means one made from the date.
	Title string
	// Creators are the record's authors, "Family, Given" or a team name;
	// empty means DefaultCreator.
	Creators []string
	// License is a Zenodo license id; empty means DefaultLicense.
	License string
	// PreviousDOI is the DOI of the release this one follows, if any.
	PreviousDOI string
}

// DefaultCreator and DefaultLicense fill the record metadata when the
// caller names none.
const (
	DefaultCreator = "MCP Atlas census maintainers"
	DefaultLicense = "cc-by-4.0"
)

// Snapshot identifiers every deposit cites: the census it continues and
// the archived classification suite its rules are held to.
const (
	SnapshotDOI = "10.5281/zenodo.23333514"
	SuiteDOI    = "10.5281/zenodo.23333516"
)

// Result describes a deposit written.
type Result struct {
	// Dir is the deposit folder; Zip the zip's file name in it.
	Dir, Zip string
	// Date is the census date (YYYY-MM-DD).
	Date string
	// Sums are the SHA-256s SHA256SUMS lists, by file name.
	Sums map[string]string
	// Files are the files to upload, in upload order (not .zenodo.json).
	Files []string
	// CensusBytes is the census files' total size, ZipBytes the zip's.
	CensusBytes, ZipBytes int64
}

var dateRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// nameRe is what a zip stem may be: it becomes a file name on Zenodo and
// on every machine that fetches it.
var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Write makes the deposit in opt.Out: every file under a temporary name,
// renamed into place as one set only once all are written, so the folder
// holds the whole deposit or none of it.
func Write(ctx context.Context, opt Options) (*Result, error) {
	if opt.Data == "" || opt.Run == "" || opt.Out == "" {
		return nil, errors.New("publish needs the release, the run and the deposit folder")
	}
	if opt.Name == "" {
		opt.Name = DefaultName
	}
	if !nameRe.MatchString(opt.Name) {
		return nil, fmt.Errorf("name %q: use letters, digits, '.', '_' and '-' only", opt.Name)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if len(opt.Creators) == 0 {
		opt.Creators = []string{DefaultCreator}
	}
	if opt.License == "" {
		opt.License = DefaultLicense
	}
	if opt.PreviousDOI != "" {
		if !strings.HasPrefix(opt.PreviousDOI, "10.") || strings.ContainsAny(opt.PreviousDOI, " \t\n") {
			return nil, fmt.Errorf("previous DOI %q is not a DOI (10.NNNN/...)", opt.PreviousDOI)
		}
	}
	rel, relBytes, err := release.ReadBytes(releaseDir(opt.Data))
	if err != nil {
		return nil, err
	}
	rep, repBytes, err := readRunReport(opt.Run)
	if err != nil {
		return nil, err
	}
	date, err := censusDate(opt.Date, rep.ReleaseDate, filepath.Join(opt.Run, ReportFile))
	if err != nil {
		return nil, err
	}
	if opt.PublicationDate == "" {
		opt.PublicationDate = opt.Now().UTC().Format(time.DateOnly)
	} else if _, err := time.Parse(time.DateOnly, opt.PublicationDate); err != nil || !dateRe.MatchString(opt.PublicationDate) {
		return nil, fmt.Errorf("publication date %q is not YYYY-MM-DD", opt.PublicationDate)
	}
	if opt.Version == "" {
		opt.Version = cmp.Or(rep.ReleaseID, date)
	}

	classesPath := filepath.Join(opt.Run, ClassesFile)
	if err := outset.Check(opt.Run); err != nil {
		return nil, err
	}
	if err := CheckClasses(classesPath, rep); err != nil {
		return nil, fmt.Errorf("the run's table contradicts itself: %w", err)
	}
	if !rep.Verified {
		return nil, fmt.Errorf("%s: the run did not verify its inputs (--no-verify): a published table must come from verified files", filepath.Join(opt.Run, ReportFile))
	}
	if rep.Skipped.Count > 0 {
		return nil, fmt.Errorf("%s: the run skipped %d bad lines: a published table must count every line", filepath.Join(opt.Run, ReportFile), rep.Skipped.Count)
	}

	if err := refuseExisting(opt.Out); err != nil {
		return nil, err
	}
	set, err := outset.Open(opt.Out)
	if err != nil {
		return nil, err
	}
	defer set.Close()

	res := &Result{Dir: opt.Out, Date: date, Zip: fmt.Sprintf("%s-%s.zip", opt.Name, strings.ReplaceAll(date, "-", ""))}
	sums, censusBytes, zipSum, zipBytes, err := writeZip(ctx, set, res.Zip, opt.Data, date)
	if err != nil {
		return nil, err
	}
	if err := holdRunToData(rep, sums, opt.Run); err != nil {
		return nil, err
	}
	if err := holdReleaseSums(opt.Data, sums); err != nil {
		return nil, err
	}
	res.CensusBytes, res.ZipBytes = censusBytes, zipBytes
	sums[res.Zip] = zipSum

	if relBytes == nil {
		relBytes, err = describeRelease(rep, date, sums)
		if err != nil {
			return nil, err
		}
	}
	classesBytes, err := openreg.ReadFile(classesPath, 64<<20)
	if err != nil {
		return nil, err
	}
	meta := metadata{opt: opt, date: date, rep: rep, zip: res.Zip, rel: rel}
	zen, err := meta.zenodoJSON()
	if err != nil {
		return nil, err
	}
	cff := meta.citation()
	for _, f := range []struct {
		name string
		b    []byte
	}{
		{ReleaseFile, relBytes},
		{ReportFile, repBytes},
		{ClassesFile, classesBytes},
		{CitationFile, cff},
	} {
		if err := set.WriteFile(f.name, f.b); err != nil {
			return nil, err
		}
		sums[f.name] = sha256Hex(f.b)
	}
	manifest, err := release.AppendSums(nil, sums)
	if err != nil {
		return nil, err
	}
	if err := set.WriteFile(SumsFile, manifest); err != nil {
		return nil, err
	}
	if err := set.WriteFile(ZenodoFile, zen); err != nil {
		return nil, err
	}
	if err := set.Commit(); err != nil {
		return nil, err
	}
	res.Sums = sums
	res.Files = []string{res.Zip, SumsFile, ReleaseFile, ReportFile, ClassesFile, CitationFile}
	return res, nil
}

// UploadFiles are the files of a deposit that go into the record's bucket,
// in upload order, given its zip's name.
func UploadFiles(zip string) []string {
	return []string{zip, SumsFile, ReleaseFile, ReportFile, ClassesFile, CitationFile}
}

// releaseDir is the folder whose release.json describes data.
func releaseDir(data string) string {
	if fi, err := os.Stat(data); err == nil && !fi.IsDir() {
		return filepath.Dir(data)
	}
	return data
}

// censusDate is the day the census was taken: the run's (report.json's
// release_date, which a crawl release's release.json decides), else the
// one given. Given both, they must agree: the table is of that day.
func censusDate(given, run, reportPath string) (string, error) {
	if given != "" {
		if _, err := time.Parse(time.DateOnly, given); err != nil || !dateRe.MatchString(given) {
			return "", fmt.Errorf("census date %q is not YYYY-MM-DD", given)
		}
	}
	switch {
	case run != "" && given != "" && run != given:
		return "", fmt.Errorf("census date %s, but %s says the release was taken on %s", given, reportPath, run)
	case run != "":
		return run, nil
	case given != "":
		return given, nil
	}
	return "", fmt.Errorf("%s names no release_date: give the census date (--date YYYY-MM-DD), or run with --release-date", reportPath)
}

// readRunReport reads the run's report.json, its bytes kept as they are:
// the deposit publishes the very file.
func readRunReport(run string) (*report.Report, []byte, error) {
	p := filepath.Join(run, ReportFile)
	if err := outset.Check(run); err != nil {
		return nil, nil, err
	}
	b, err := openreg.ReadFile(p, 256<<20)
	if err != nil {
		return nil, nil, err
	}
	rep, err := report.ReadJSON(strings.NewReader(string(b)))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	return rep, b, nil
}

// refuseExisting refuses a deposit folder that holds anything but the
// atomic writer's own files: a deposit is never written over another.
func refuseExisting(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".outset-") {
			return fmt.Errorf("deposit folder %s is not empty (it holds %q): a deposit is written whole into a new folder", dir, e.Name())
		}
	}
	return nil
}

// holdRunToData refuses a run that was not made of these very files: the
// published table must be the table of the published bytes.
func holdRunToData(rep *report.Report, sums map[string]string, run string) error {
	seen := map[string]bool{}
	for _, in := range rep.Inputs {
		want, ok := sums[in.Name]
		if !ok {
			continue
		}
		seen[in.Name] = true
		if in.SHA256 != want {
			return fmt.Errorf("%s: the run read %s with SHA-256 %s, the release's is %s: the run is not of this release", filepath.Join(run, ReportFile), in.Name, in.SHA256, want)
		}
	}
	for _, n := range CensusFiles() {
		if !seen[n] {
			return fmt.Errorf("%s: the run lists no input %s: not a run of a census release", filepath.Join(run, ReportFile), n)
		}
	}
	return nil
}

// holdReleaseSums checks the census files against the release's own
// SHA256SUMS when it has one beside them.
func holdReleaseSums(data string, sums map[string]string) error {
	p := filepath.Join(releaseDir(data), release.SumsFile)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	m, err := hashverify.ReadSHA256Sums(p)
	if err != nil {
		return err
	}
	for _, n := range CensusFiles() {
		if _, listed := m[n]; !listed {
			continue
		}
		if err := m.Check(n, sums[n]); err != nil {
			return fmt.Errorf("the release's %s: %w", p, err)
		}
	}
	return nil
}

// describeRelease is the release.json publish writes for a release that
// has none: what the census is, in the fields release.json has.
func describeRelease(rep *report.Report, date string, sums map[string]string) ([]byte, error) {
	var records = map[string]int64{}
	for _, in := range rep.Inputs {
		records[in.Name] = in.Records
	}
	d := struct {
		Census      string `json:"census"`
		ReleaseID   string `json:"release_id"`
		ReleaseDate string `json:"release_date"`
		Started     string `json:"started"`
		Finished    string `json:"finished"`
		Candidates  struct {
			File   string `json:"file"`
			SHA256 string `json:"sha256"`
		} `json:"candidates"`
		Counts struct {
			Candidates int64 `json:"candidates"`
			Servers    int64 `json:"servers"`
			Tools      int64 `json:"tools"`
		} `json:"counts"`
	}{
		Census:      fmt.Sprintf("census release of %s, published without crawl provenance (%s)", date, kindText(rep.Kind)),
		ReleaseID:   cmp.Or(rep.ReleaseID, date),
		ReleaseDate: date,
		Started:     date + "T00:00:00Z",
		Finished:    date + "T00:00:00Z",
	}
	d.Candidates.File, d.Candidates.SHA256 = release.CandidatesFile, sums[release.CandidatesFile]
	d.Counts.Candidates, d.Counts.Servers, d.Counts.Tools = records[release.CandidatesFile], rep.Servers, rep.Tools
	b, err := json.MarshalIndent(d, "", "  ")
	return append(b, '\n'), err
}

func kindText(kind string) string {
	switch kind {
	case report.KindSynthetic:
		return "a synthetic census"
	case report.KindReproduction:
		return "the census files of the frozen snapshot"
	}
	return "census files verified against their own SHA256SUMS"
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
