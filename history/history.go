// Package history keeps census releases as one dataset: a folder with a
// hive partition per release (release=<id>/, holding that run's
// tools.parquet, properties.parquet, classes.parquet and report.json as
// they are), so that DuckDB, Polars, pyarrow or Spark read every release
// at once with a release column; and, rebuilt from the partitions each
// time, history.parquet (one row per release and class, beside the
// release before), history.md and history.html.
//
// Memory does not grow with the releases or their size: the history is
// built from each partition's report.json and a streamed comparison
// (report/tooldiff, as diff makes it) of consecutive tools.parquet, one
// pair at a time; a pair the previous history.parquet compared, of the
// same two files (by SHA-256), keeps its figures.
package history

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
	"github.com/atlas-reproduce/atlas-reproduce/report/tooldiff"
)

// PartitionFiles are the files of a run that a release's partition holds,
// byte for byte.
var PartitionFiles = []string{"tools.parquet", "properties.parquet", "classes.parquet", "report.json"}

// The files history writes beside the partitions.
const (
	TableFile    = "history.parquet"
	MarkdownFile = "history.md"
	HTMLFile     = "history.html"
)

// partitionPrefix starts a partition folder's name: release=<id>.
const partitionPrefix = "release="

// Options configure Add.
type Options struct {
	// Dataset is the dataset folder, created when missing.
	Dataset string
	// Runs are run output folders (run, reproduce) to add.
	Runs []string
	// Replace lets a run take the place of another run already in the
	// dataset under the same release id; without it, that is refused.
	Replace bool
}

// Result says what Add did.
type Result struct {
	// Added, Replaced and Unchanged are the release ids of the runs, by
	// what became of their partition.
	Added, Replaced, Unchanged []string
	// Releases are the dataset's releases, by date.
	Releases []Release
	// HistoryChanged is false when history.parquet, .md and .html were
	// already as they are (nothing was written).
	HistoryChanged bool
	// Compared counts the pairs of consecutive releases whose
	// tools.parquet were compared; Reused those taken from the previous
	// history.parquet, which had compared the same two files.
	Compared, Reused int
}

// Release is one release of a dataset.
type Release struct {
	ID, Date string
	// Dir is its partition folder.
	Dir string
}

// run is one run to add.
type run struct {
	dir    string
	id     string
	date   string
	action string // "add", "replace" or "same"
}

// Add adds the runs to the dataset, each as the partition of its release,
// then rebuilds history.parquet, history.md and history.html from every
// partition. Each partition is written as one set (internal/outset): its
// four files appear together or not at all; a partition already holding
// the same bytes is left alone, one holding another run's is refused
// unless opt.Replace; other partitions are never touched. The dataset is
// locked while Add runs.
func Add(ctx context.Context, opt Options) (*Result, error) {
	if opt.Dataset == "" {
		return nil, errors.New("history: no dataset folder")
	}
	runs, err := readRuns(opt.Runs)
	if err != nil {
		return nil, err
	}
	set, err := outset.Open(opt.Dataset)
	if err != nil {
		return nil, err
	}
	defer set.Close()

	res := &Result{}
	// Every run is checked against the dataset before any is written, so
	// that a refusal leaves the dataset as it was.
	for i := range runs {
		r := &runs[i]
		part := filepath.Join(opt.Dataset, partitionPrefix+r.id)
		present, err := hasPartition(part)
		if err != nil {
			return nil, err
		}
		if !present {
			r.action = "add"
			continue
		}
		differs, err := differingFile(r.dir, part)
		if err != nil {
			return nil, err
		}
		switch {
		case differs == "":
			r.action = "same"
		case opt.Replace:
			r.action = "replace"
		default:
			return nil, fmt.Errorf("release %s is already in %s from another run (its %s differs from %s's); --replace to replace it", r.id, opt.Dataset, differs, r.dir)
		}
	}
	for _, r := range runs {
		switch r.action {
		case "same":
			res.Unchanged = append(res.Unchanged, r.id)
			continue
		case "add":
			res.Added = append(res.Added, r.id)
		case "replace":
			res.Replaced = append(res.Replaced, r.id)
		}
		if err := writePartition(ctx, r.dir, filepath.Join(opt.Dataset, partitionPrefix+r.id)); err != nil {
			return nil, err
		}
	}
	if res.Releases, err = Releases(opt.Dataset); err != nil {
		return nil, err
	}
	if err := writeHistory(ctx, set, res); err != nil {
		return nil, err
	}
	return res, nil
}

// readRuns reads each run folder's release and checks that its files are
// there and name the same release.
func readRuns(dirs []string) ([]run, error) {
	if len(dirs) == 0 {
		return nil, errors.New("history: no run folder to add")
	}
	var runs []run
	seen := map[string]string{}
	for _, dir := range dirs {
		if err := outset.Check(dir); err != nil {
			return nil, err
		}
		r, err := report.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			return nil, err
		}
		if err := checkRelease(r, dir); err != nil {
			return nil, err
		}
		if other, ok := seen[r.ReleaseID]; ok {
			return nil, fmt.Errorf("%s and %s are both of release %s: add one, or run one again with another --release-id", other, dir, r.ReleaseID)
		}
		seen[r.ReleaseID] = dir
		for _, name := range PartitionFiles[:3] {
			meta, err := tables.ReadMetadata(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			if meta[tables.MetaReleaseID] != r.ReleaseID || meta[tables.MetaReleaseDate] != r.ReleaseDate {
				return nil, fmt.Errorf("%s: of release %q (%q), but %s is of %q (%q): they are not of one run", filepath.Join(dir, name),
					meta[tables.MetaReleaseID], meta[tables.MetaReleaseDate], filepath.Join(dir, "report.json"), r.ReleaseID, r.ReleaseDate)
			}
		}
		runs = append(runs, run{dir: dir, id: r.ReleaseID, date: r.ReleaseDate})
	}
	return runs, nil
}

// checkRelease checks that the report r, read from dir, names its release.
func checkRelease(r *report.Report, dir string) error {
	where := filepath.Join(dir, "report.json")
	if r.ReleaseID == "" || r.ReleaseDate == "" {
		return fmt.Errorf("%s: the run names no release (release_id, release_date): run it again with --release-date YYYY-MM-DD (and --release-id ID)", where)
	}
	if err := report.CheckReleaseID(r.ReleaseID); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := report.CheckReleaseDate(r.ReleaseDate); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// hasPartition reports whether part holds a partition: its report.json.
// A folder without one (left by a writer killed before its commit) holds
// none and is written over.
func hasPartition(part string) (bool, error) {
	if err := outset.Check(part); errors.Is(err, outset.ErrInterrupted) {
		// A writer was killed between its first and last rename: opening
		// the set completes its commit (the dataset's lock is held).
		set, err := outset.Open(part)
		if err != nil {
			return false, err
		}
		if err := set.Close(); err != nil {
			return false, err
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	_, err := os.Lstat(filepath.Join(part, "report.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// differingFile names the first of PartitionFiles whose bytes differ
// between the run folder and the partition; "" when none does.
func differingFile(dir, part string) (string, error) {
	for _, name := range PartitionFiles {
		same, err := sameBytes(filepath.Join(dir, name), filepath.Join(part, name))
		if err != nil {
			return "", err
		}
		if !same {
			return name, nil
		}
	}
	return "", nil
}

// sameBytes compares two files a buffer at a time; a missing second file
// differs.
func sameBytes(a, b string) (bool, error) {
	fa, err := openreg.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := openreg.Open(b)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer fb.Close()
	return sameReaders(fa, fb, a, b)
}

func sameReaders(ra, rb io.Reader, a, b string) (bool, error) {
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(ra, bufA)
		nb, errB := io.ReadFull(rb, bufB)
		if errA != nil && errA != io.EOF && errA != io.ErrUnexpectedEOF {
			return false, fmt.Errorf("%s: %w", a, errA)
		}
		if errB != nil && errB != io.EOF && errB != io.ErrUnexpectedEOF {
			return false, fmt.Errorf("%s: %w", b, errB)
		}
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		if errA != nil || errB != nil {
			return errA != nil && errB != nil, nil
		}
	}
}

// writePartition copies the run's files into the partition as one set.
func writePartition(ctx context.Context, dir, part string) error {
	set, err := outset.Open(part)
	if err != nil {
		return err
	}
	defer set.Close()
	for _, name := range PartitionFiles {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := copyInto(set, filepath.Join(dir, name), name); err != nil {
			return err
		}
	}
	return set.Commit()
}

func copyInto(set *outset.Set, src, name string) error {
	in, err := openreg.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := set.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return fmt.Errorf("%s into %s: %w", src, filepath.Join(set.Dir(), name), err)
	}
	return nil
}

// Releases lists the dataset's partitions by date, then id. A partition
// whose report.json names another release than its folder is an error.
func Releases(dataset string) ([]Release, error) {
	entries, err := os.ReadDir(dataset)
	if err != nil {
		return nil, err
	}
	var rels []Release
	for _, e := range entries {
		id, ok := strings.CutPrefix(e.Name(), partitionPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		part := filepath.Join(dataset, e.Name())
		present, err := hasPartition(part)
		if err != nil {
			return nil, err
		}
		if !present {
			continue
		}
		r, err := report.ReadFile(filepath.Join(part, "report.json"))
		if err != nil {
			return nil, err
		}
		if err := checkRelease(r, part); err != nil {
			return nil, err
		}
		if r.ReleaseID != id {
			return nil, fmt.Errorf("%s: release %s in the folder of release %s", filepath.Join(part, "report.json"), r.ReleaseID, id)
		}
		rels = append(rels, Release{ID: id, Date: r.ReleaseDate, Dir: part})
	}
	slices.SortFunc(rels, func(a, b Release) int {
		return cmp.Or(cmp.Compare(a.Date, b.Date), cmp.Compare(a.ID, b.ID))
	})
	return rels, nil
}

// MetaToolsDigests is the key of history.parquet's metadata listing the
// SHA-256 of each release's tools.parquet (a JSON object, release id to
// hex digest): the files its comparisons were made of, so that the next
// history compares again only the pairs whose files changed.
const MetaToolsDigests = "atlas-reproduce.history_tools_sha256"

// Earlier is what a previous history.parquet says of each release beside
// the release before it, and of which files.
type Earlier struct {
	prev    map[string]string
	rows    map[string][]report.HistoryRow
	digests map[string]string
}

// ReadEarlier reads the history.parquet at path; a missing or unreadable
// file is an empty Earlier (every pair is then compared: the file is
// this package's output, rewritten from the partitions, not an input
// whose error would mean anything).
func ReadEarlier(ctx context.Context, path string) *Earlier {
	e := &Earlier{prev: map[string]string{}, rows: map[string][]report.HistoryRow{}, digests: map[string]string{}}
	meta, err := tables.ReadMetadata(path)
	if err != nil || json.Unmarshal([]byte(meta[MetaToolsDigests]), &e.digests) != nil {
		return &Earlier{}
	}
	last := ""
	err = tables.ReadHistory(ctx, path, func(r *report.HistoryRow) error {
		if _, seen := e.rows[r.Release]; !seen {
			e.prev[r.Release] = last
		}
		e.rows[r.Release] = append(e.rows[r.Release], *r)
		last = r.Release
		return nil
	})
	if err != nil {
		return &Earlier{}
	}
	return e
}

// comparison is the earlier comparison of release id beside prev when it
// was made of the files with the given digests: the tool counts and, per
// class, the tools that gained and lost it, as a ToolDiff (its lists
// empty, Unchanged from the new report's count); nil when there is none.
func (e *Earlier) comparison(id, prev string, digests map[string]string, r *report.Report) *report.ToolDiff {
	if e == nil || e.prev == nil || e.prev[id] != prev || prev == "" || e.digests[id] != digests[id] || e.digests[prev] != digests[prev] {
		return nil
	}
	rows := e.rows[id]
	if len(rows) == 0 || rows[0].ToolsAdded == nil || rows[0].ToolsRemoved == nil || rows[0].ToolsChanged == nil {
		return nil
	}
	td := report.NewToolDiff()
	td.Tools = report.ToolCounts{Added: *rows[0].ToolsAdded, Removed: *rows[0].ToolsRemoved, Changed: *rows[0].ToolsChanged}
	td.Tools.Unchanged = r.Tools - td.Tools.Added - td.Tools.Changed
	found := 0
	for _, row := range rows {
		if !row.Normative {
			continue
		}
		if row.Gained == nil || row.Lost == nil {
			return nil
		}
		td.ClassesGained[row.Class], td.ClassesLost[row.Class] = *row.Gained, *row.Lost
		found++
	}
	if found != len(report.ClassOrder()) {
		return nil
	}
	return td
}

// Digests returns the SHA-256 of each release's tools.parquet, by id.
func Digests(ctx context.Context, rels []Release) (map[string]string, error) {
	out := make(map[string]string, len(rels))
	for _, rel := range rels {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		path := filepath.Join(rel.Dir, "tools.parquet")
		f, err := openreg.Open(path)
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out[rel.ID] = hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}

// Rows returns history.parquet's rows of the releases in their order: each
// from its report.json and, from the second on, the comparison of its
// tools.parquet with the one before, as diff compares two runs (and
// checks them: a report.json must count what its table holds). A
// comparison earlier made of the same two files (digests) is taken from
// earlier instead of made again; nil earlier compares every pair. It
// returns how many pairs it compared and how many it took.
func Rows(ctx context.Context, rels []Release, digests map[string]string, earlier *Earlier, fn func(*report.HistoryRow) error) (compared, reused int, err error) {
	var prev *report.Report
	for i, rel := range rels {
		r, err := report.ReadFile(filepath.Join(rel.Dir, "report.json"))
		if err != nil {
			return compared, reused, err
		}
		var td *report.ToolDiff
		if i > 0 {
			if td = earlier.comparison(rel.ID, rels[i-1].ID, digests, r); td != nil {
				reused++
			} else {
				if td, err = tooldiff.Compare(ctx, rels[i-1].Dir, rel.Dir, tooldiff.Options{}); err != nil {
					return compared, reused, err
				}
				compared++
			}
			if err := report.CheckTables(prev, r, td, rels[i-1].Dir, rel.Dir); err != nil {
				return compared, reused, err
			}
		}
		for _, row := range report.HistoryRows(r, td) {
			if err := fn(&row); err != nil {
				return compared, reused, err
			}
		}
		prev = r
	}
	return compared, reused, nil
}

// writeHistory writes history.parquet, history.md and history.html of
// res.Releases into set, and commits them unless they hold what the
// dataset has already.
func writeHistory(ctx context.Context, set *outset.Set, res *Result) error {
	rels := res.Releases
	digests, err := Digests(ctx, rels)
	if err != nil {
		return err
	}
	earlier := ReadEarlier(ctx, filepath.Join(set.Dir(), TableFile))
	digestJSON, err := json.Marshal(digests)
	if err != nil {
		return err
	}
	pf, err := set.Create(TableFile)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(pf, 1<<20)
	hw, err := tables.NewHistoryWriter(bw, tables.Source("history of "+strconv.Itoa(len(rels))+" census releases"), tables.KV{Key: MetaToolsDigests, Value: string(digestJSON)})
	if err != nil {
		return err
	}
	// The rows are a few per release: the pages are drawn from them all.
	var rows []report.HistoryRow
	res.Compared, res.Reused, err = Rows(ctx, rels, digests, earlier, func(r *report.HistoryRow) error {
		rows = append(rows, *r)
		return hw.Append(r)
	})
	if err != nil {
		return err
	}
	if err := hw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", TableFile, err)
	}
	temps := map[string]string{TableFile: pf.Name()}
	for _, out := range []struct {
		name  string
		write func(io.Writer, []report.HistoryRow) error
	}{{MarkdownFile, report.WriteHistoryMarkdown}, {HTMLFile, report.WriteHistoryHTML}} {
		f, err := set.Create(out.name)
		if err != nil {
			return err
		}
		b := bufio.NewWriter(f)
		if err := out.write(b, rows); err != nil {
			return fmt.Errorf("%s: %w", out.name, err)
		}
		if err := b.Flush(); err != nil {
			return fmt.Errorf("%s: %w", out.name, err)
		}
		temps[out.name] = f.Name()
	}
	for name, temp := range temps {
		same, err := sameBytes(temp, filepath.Join(set.Dir(), name))
		if err != nil {
			return err
		}
		if !same {
			res.HistoryChanged = true
			return set.Commit()
		}
	}
	// Nothing changed: Close drops the temporaries, the files stay as
	// they were, to the inode.
	return nil
}
