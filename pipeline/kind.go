package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tooldiff"
)

// TruthName is the ground truth a synthetic census carries beside its data
// (synth writes it); a run over such a folder is held to it.
const TruthName = "truth.json"

// decideKind sets what the report can say, from what its inputs claim to
// be: a census with a ground truth is synthetic and is held to it; a crawl
// release (release.json) or data verified against sums that are not the
// pinned ones is a release, set beside the baseline when one is given;
// anything else claims to be the snapshot.
func decideKind(r *report.Report, opt Options, manifest hashverify.Manifest) error {
	truth, truthFile, err := readTruth(opt)
	if err != nil {
		return err
	}
	switch {
	case truth != nil:
		r.Kind = report.KindSynthetic
		r.Truth = r.CheckTruth(truth, filepath.Base(truthFile))
	case r.Release != nil || (!opt.NoVerify && !manifest.IsPinned()):
		r.Kind = report.KindRelease
	default:
		r.Kind = report.KindReproduction
	}
	return nil
}

// readTruth reads opt.TruthFile, or truth.json in the data folder when
// there is one. It returns nil when there is no truth.
func readTruth(opt Options) (*report.Truth, string, error) {
	path := opt.TruthFile
	if path == "" {
		if fi, err := os.Stat(opt.Data); err != nil || !fi.IsDir() {
			return nil, "", nil
		}
		path = filepath.Join(opt.Data, TruthName)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, "", nil
		}
	}
	f, err := outset.OpenFile(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	t, err := report.ReadTruth(f, path)
	return t, path, err
}

// setBaseline compares this run with the previous one in dir: class by
// class from its report.json, tool by tool from its tools.parquet.
// toolsPath is this run's tools.parquet, not yet published.
func setBaseline(ctx context.Context, r *report.Report, dir, toolsPath string) error {
	f, err := outset.OpenFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	old, err := report.ReadJSON(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("--baseline %s: %w", dir, err)
	}
	d := report.Diff(old, r)
	d.Old.Label, d.New.Label = dir, "this run"
	opt := tooldiff.Options{NewTools: toolsPath}
	for _, in := range r.Inputs {
		if in.Name == release.ServersFile && !strings.Contains(in.Location, "!") {
			opt.NewServers = in.Location
		}
	}
	td, err := tooldiff.Compare(ctx, dir, "", opt)
	if err != nil {
		return fmt.Errorf("--baseline %s: %w", dir, err)
	}
	d.AddTools(td)
	r.Baseline = &report.Baseline{Dir: dir, Diff: d}
	return nil
}

// describeSource says, for the tables' metadata, what the run reads: known
// before the run, from the data folder and the manifest.
func describeSource(opt Options, manifest hashverify.Manifest, manifestName string) string {
	if rel, _, err := release.ReadBytes(opt.Data); err == nil && rel != nil {
		from := rel.Candidates.Registry
		if from == "" {
			from = rel.Candidates.File
		}
		return fmt.Sprintf("crawl release of %s, crawled %s to %s", from, rel.Started, rel.Finished)
	}
	if t, _, err := readTruth(opt); err == nil && t != nil {
		return "synthetic census with its ground truth"
	}
	switch {
	case opt.NoVerify:
		return "census files, hashes not checked"
	case manifest.IsPinned():
		return "census snapshot " + report.Published().Snapshot + ", pinned SHA-256"
	}
	return "census release, SHA-256 from " + manifestName
}

// nameShared gives the most shared definitions the name of their first
// tool, read back from this run's tools.parquet (the run keeps hashes, not
// names, per tool).
func nameShared(ctx context.Context, d *report.Definitions, toolsPath string) error {
	if d == nil || len(d.MostShared) == 0 {
		return nil
	}
	prefixes := make([]string, len(d.MostShared))
	for i, s := range d.MostShared {
		prefixes[i] = s.SHA256Prefix
	}
	names, err := tooldiff.FirstNames(ctx, toolsPath, prefixes)
	if err != nil {
		return fmt.Errorf("tools.parquet: %w", err)
	}
	for i := range d.MostShared {
		d.MostShared[i].Tool = names[d.MostShared[i].SHA256Prefix]
	}
	return nil
}

// notSnapshotHint says what a run over data that are not the snapshot
// wants, when it was held to the pinned hashes.
func notSnapshotHint(opt Options, manifest hashverify.Manifest) string {
	if opt.Manifest != nil || !manifest.IsPinned() {
		return ""
	}
	sums := "FILE"
	if fi, err := os.Stat(filepath.Join(opt.Data, release.SumsFile)); err == nil && fi.Mode().IsRegular() {
		sums = filepath.Join(opt.Data, release.SumsFile)
	}
	return fmt.Errorf("\nthese files are not the pinned %s snapshot, whose hashes the run checks by default: "+
		"for another census release, give its own hashes with --sha256sums %s; to count without checking, --no-verify",
		report.Published().Snapshot, sums).Error()
}
