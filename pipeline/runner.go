// Package pipeline carries out one census run: it finds the snapshot's files,
// verifies their SHA-256 on the read that decompresses them, decodes and
// classifies every tool through the pipeline's worker pool, merges the
// per-worker counters, and publishes report.json, report.md and the Parquet
// tables — all of them, or none.
package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/atlas-reproduce/atlas-reproduce/aggregate"
	"github.com/atlas-reproduce/atlas-reproduce/evaluate"
	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/cpuquota"
	"github.com/atlas-reproduce/atlas-reproduce/internal/defaults"
	"github.com/atlas-reproduce/atlas-reproduce/internal/gunzip"
	"github.com/atlas-reproduce/atlas-reproduce/internal/hugeheap"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline/linepool"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline/source"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
)

// Options configure a run.
type Options struct {
	// Data is a folder holding the files or the Zenodo zips, or a zip.
	Data string
	// Out is the output folder.
	Out string
	// Manifest holds the expected hashes; nil means the pinned ones.
	Manifest hashverify.Manifest
	// ManifestName names the manifest in the report (a file's base name).
	ManifestName string
	// NoVerify skips the comparison of hashes (they are still computed and
	// reported); the report then says UNVERIFIED.
	NoVerify bool
	// Workers is the number of decode-and-classify workers (default
	// GOMAXPROCS).
	Workers int
	// ChunkSize overrides the pipeline's chunk size (tests use small ones).
	ChunkSize int
	// MaxLine is the longest line accepted in bytes (default
	// linepool.DefaultMaxLine); a longer one fails the run.
	MaxLine int
	// SkipBad passes over bad lines, counting them, instead of failing.
	SkipBad bool
	// NoSensitivity skips the non-normative sensitivity variants, to measure
	// their cost and to show that no normative figure depends on them: the
	// report then has no sensitivity figures, and their tools.parquet
	// columns are null.
	NoSensitivity bool
	// TruthFile is a synthetic census's ground truth (synth's truth.json):
	// the run is then held to it (KindSynthetic). Empty looks for
	// truth.json in the Data folder.
	TruthFile string
	// Baseline is a previous run's output folder: a release's report then
	// sets its figures beside that run's, class by class and tool by tool.
	Baseline string
	// Evaluation, when set, is a labelled sample's measure of the classes
	// (evaluate's evaluation.json), shown in the report beside the counts.
	Evaluation *evaluate.Evaluation
	// ReleaseID and ReleaseDate name the census release when its inputs
	// do not (see releaseOf): a release verified against other sums, a
	// synthetic census. ReleaseID also renames a release its inputs name.
	ReleaseID, ReleaseDate string
	// Progress, when not nil, is told after each read how many compressed
	// bytes of server_tools.jsonl.gz the run has read (Done) of the file's
	// size (Total), the file's name as Task, from the goroutine that reads
	// it.
	Progress progress.Func
	// Logger receives the one-line summary; nil discards it.
	Logger *slog.Logger
	// MemoryRoom, when positive, sets a soft memory limit for the run
	// (runtime/debug.SetMemoryLimit) of MemoryRoom bytes plus what its
	// lasting structures (the definitions tally, the name ordinals) hold,
	// raised as they grow; the previous limit is restored at the end.
	// Zero leaves the limit alone. DefaultMemoryRoom is the command's.
	MemoryRoom int64
	// HugePages asks, where the kernel gives transparent huge pages only
	// to ranges advised for them, for the run's heap to be advised
	// (internal/hugeheap): once per process, for MemoryRoom bytes (or
	// DefaultMemoryRoom) and a quarter more for the lasting structures.
	HugePages bool
	// FitCPUQuota lowers GOMAXPROCS, once per process, to a CPU quota of
	// one CPU or less (internal/cpuquota), below the runtime's own floor
	// of two: under such a quota a second P costs CPU and wins no time.
	// Workers' default follows it.
	FitCPUQuota bool
	// Hold, when set, is called with the finished report before it is
	// written, to hold it to a published table (a deposit's): what it
	// sets (report.Report.Deposit) appears in report.json, .md and .html.
	Hold func(*report.Report) error
}

// maxSkippedExamples is how many skipped lines the report lists.
const maxSkippedExamples = 10

// Run carries out a run and returns its report. On any error nothing is
// published under a final name.
func Run(ctx context.Context, opt Options) (*report.Report, error) {
	start := time.Now()
	// limit is MemoryRoom's limit (nil without one), held from here to the
	// end of Run: reading tools.parquet back (nameShared, the baseline)
	// comes after the tables are written. It is the run's own state, so it
	// lives here and not in the caller's Options.
	var limit *memoryLimit
	if opt.MemoryRoom > 0 {
		limit = newMemoryLimit(opt.MemoryRoom)
		limit.update(0)
		defer limit.restore()
	}
	var huge hugeheap.Result
	if opt.HugePages {
		room := opt.MemoryRoom
		defaults.Set(&room, DefaultMemoryRoom)
		huge = hugeheap.Prepare(room + room/4)
	}
	var cpu cpuquota.Result
	if opt.FitCPUQuota {
		cpu = cpuquota.Fit()
	}
	defaults.Set(&opt.Workers, runtime.GOMAXPROCS(0))
	manifest, manifestName := opt.Manifest, opt.ManifestName
	if manifest == nil {
		manifest, manifestName = hashverify.Pinned(), "pinned (the spec's)"
	}
	if !opt.NoVerify {
		for _, name := range hashverify.SnapshotFiles() {
			if _, ok := manifest[name]; !ok {
				return nil, fmt.Errorf("%s: the manifest %s lists no SHA-256 for it", name, manifestName)
			}
		}
	}

	// The folder is taken first, so that a second run on it stops before
	// reading anything. Its six files are published as one set, and only on
	// success.
	out, err := outset.Open(opt.Out)
	if err != nil {
		return nil, err
	}
	defer out.Close()

	src, err := source.Open(opt.Data)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	files := make(map[string]*source.File, len(hashverify.SnapshotFiles()))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, name := range hashverify.SnapshotFiles() {
		f, err := src.Open(name)
		if err != nil {
			return nil, err
		}
		files[name] = f
	}

	toolsF, err := out.Create("tools.parquet")
	if err != nil {
		return nil, err
	}
	propsF, err := out.Create("properties.parquet")
	if err != nil {
		return nil, err
	}

	relID, relDate, err := releaseOf(opt, manifest)
	if err != nil {
		return nil, err
	}
	source := tables.Source(describeSource(opt, manifest, manifestName))
	meta := append([]tables.KV{source}, tables.Release(relID, relDate)...)
	inputs := make([]report.Input, len(hashverify.SnapshotFiles()))
	var main *mainResult
	g, gctx := errgroup.WithContext(ctx)
	for i, name := range hashverify.SnapshotFiles() {
		f := files[name]
		inputs[i] = report.Input{Name: name, Location: f.Location}
		if name == release.ToolsFile {
			g.Go(func() error {
				var err error
				main, err = runTools(gctx, opt, limit, f, toolsF, propsF, &inputs[i], meta...)
				return err
			})
			continue
		}
		g.Go(func() error {
			return linepool.Labelled(gctx, "side-files", func() error { return countRecords(gctx, f, opt.MaxLine, &inputs[i]) })
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}

	verified := !opt.NoVerify
	var mismatches []error
	for i := range inputs {
		in := &inputs[i]
		if opt.NoVerify {
			continue
		}
		in.Expected = manifest[in.Name]
		if err := manifest.Check(in.Name, in.SHA256); err != nil {
			mismatches = append(mismatches, err)
			continue
		}
		in.OK = true
	}
	if len(mismatches) > 0 {
		return nil, fmt.Errorf("verification failed, no report written: %w%s", errors.Join(mismatches...), notSnapshotHint(opt, manifest))
	}

	if err := nameShared(ctx, main.defs, toolsF.Name()); err != nil {
		return nil, err
	}
	r := buildReport(main, inputs, verified, manifestName)
	r.ReleaseID, r.ReleaseDate = relID, relDate
	if r.Release, err = readRelease(opt.Data, manifest, !opt.NoVerify); err != nil {
		return nil, err
	}
	if err := decideKind(r, opt, manifest); err != nil {
		return nil, err
	}
	r.Judge(!opt.NoVerify && manifest.IsPinned())
	if opt.Hold != nil {
		if err := opt.Hold(r); err != nil {
			return nil, err
		}
	}
	r.Evaluation = opt.Evaluation
	if opt.Baseline != "" {
		if err := setBaseline(ctx, r, opt.Baseline, toolsF.Name()); err != nil {
			return nil, err
		}
	}
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"classes.parquet", func(w io.Writer) error { return tables.WriteClasses(w, r, meta...) }},
		{"report.json", r.WriteJSON},
		{"report.md", r.WriteMarkdown},
		{"report.html", r.WriteHTML},
	} {
		f, err := out.Create(w.name)
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriter(f)
		if err := w.write(bw); err != nil {
			return nil, fmt.Errorf("%s: %w", w.name, err)
		}
		if err := bw.Flush(); err != nil {
			return nil, fmt.Errorf("%s: %w", w.name, err)
		}
	}
	if err := out.Commit(); err != nil {
		return nil, err
	}
	el := time.Since(start)
	verdict := r.Verdict
	if verdict == "" && r.Deposit != nil {
		verdict = r.Deposit.Verdict
	}
	if verdict == "" {
		verdict = "none"
	}
	defaults.Logger(opt.Logger).Info(release.ToolsFile+": run finished",
		"tools", r.Tools, "servers", r.Servers, "elapsed", el.Round(10*time.Millisecond),
		"json_mb", math.Round(float64(main.jsonBytes)/1e5)/10, "mb_per_s", math.Round(float64(main.jsonBytes)/1e6/el.Seconds()),
		"workers", opt.Workers, "gomaxprocs", runtime.GOMAXPROCS(0), "cpu_quota", cpu.Quota, "huge_pages", huge.Advised, "report", r.Kind, "verdict", verdict, "out", opt.Out)
	return r, nil
}

// stream is a census file opened for reading: its decompressed content,
// with the raw bytes hashed on the way. It inflates on the goroutine that
// reads it and holds no other resource, so it needs no closing.
type stream struct {
	io.Reader
	hr *hashverify.Reader
}

// finish drains what the reader left unread (a stream read to its end
// leaves nothing; one that stops early does), so that the hash covers the
// whole file.
func (s *stream) finish() error {
	_, err := io.Copy(io.Discard, s.hr)
	return err
}

// openStream opens f for reading.
// tell, when not nil, is told of every read.
func openStream(f *source.File, tell progress.Func) (*stream, error) {
	if f.Size == 0 {
		return nil, fmt.Errorf("%s: empty file (%s)", f.Name, f.Location)
	}
	var raw io.Reader = f
	if tell != nil {
		raw = &countingReader{r: f, report: func(n int64) { tell(progress.Report{Task: f.Name, Done: n, Total: f.Size}) }}
	}
	s := &stream{hr: hashverify.NewReader(raw)}
	if !strings.HasSuffix(f.Name, ".gz") {
		s.Reader = s.hr
		return s, nil
	}
	zr, err := gunzip.NewReader(s.hr)
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip stream: %w", f.Name, err)
	}
	s.Reader = zr
	return s, nil
}

// countRecords hashes a side file and counts its non-blank lines.
func countRecords(ctx context.Context, f *source.File, maxLine int, in *report.Input) error {
	st, err := openStream(f, nil)
	if err != nil {
		return err
	}
	hr := st.hr
	lr := census.NewLineReader(st)
	lr.MaxLine = maxLine
	var records int64
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		text, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if tl := tooLong(f, err); tl != nil {
				return tl
			}
			return streamError(f, hr, lr.Line(), err)
		}
		if !census.IsBlank(text) {
			records++
		}
	}
	if err := st.finish(); err != nil {
		return streamError(f, hr, lr.Line(), err)
	}
	if records == 0 {
		return fmt.Errorf("%s: no records (%d lines)", f.Name, lr.Line())
	}
	in.Bytes, in.SHA256, in.Records = hr.N(), hr.Sum(), records
	return nil
}

// tooLong names the file of a line over the limit; it returns nil for any
// other error.
func tooLong(f *source.File, err error) error {
	var tl *linepool.LineTooLongError
	if errors.As(err, &tl) {
		return fmt.Errorf("%s: %w (--max-line)", f.Name, tl)
	}
	return nil
}

func streamError(f *source.File, hr *hashverify.Reader, line int64, err error) error {
	what := "read"
	var corrupt *gunzip.CorruptError
	if errors.Is(err, gunzip.ErrChecksum) || errors.Is(err, gunzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &corrupt) {
		what = "corrupt or truncated gzip"
	}
	at := ""
	if line >= 0 {
		at = fmt.Sprintf(", at line %d", line+1)
	}
	of := ""
	if f.Size >= 0 {
		of = fmt.Sprintf(" of %d", f.Size)
	}
	return fmt.Errorf("%s: %s: %v (after %d%s compressed bytes%s)", f.Location, what, err, hr.N(), of, at)
}

// mainResult is what the server_tools pass yields.
type mainResult struct {
	counters  *aggregate.Counters
	sens      *aggregate.Sensitivity // nil when not computed
	skipped   report.Skipped
	jsonBytes int64
	defs      *report.Definitions
}

// runTools runs server_tools.jsonl.gz through the pipeline: the decode
// stage on the workers, the sink stage in order, the tables stage writing
// the two Parquet tables beside them.
func runTools(ctx context.Context, opt Options, limit *memoryLimit, f *source.File, toolsF, propsF io.Writer, in *report.Input, meta ...tables.KV) (*mainResult, error) {
	st, err := openStream(f, opt.Progress)
	if err != nil {
		return nil, err
	}
	hr := st.hr
	pool := newRowsPool(opt.Workers)
	tables, err := startTables(ctx, toolsF, propsF, pool, meta...)
	if err != nil {
		return nil, err
	}
	defer tables.close()
	decode := newDecodeStage(f.Name, opt.SkipBad, opt.NoSensitivity, opt.Workers, pool, newNameSeeds())
	sink := newSinkStage(tables)
	sink.limit = limit

	counted := &countingReader{r: st}
	err = linepool.Run(ctx, counted, linepool.Config{Workers: opt.Workers, ChunkSize: opt.ChunkSize, MaxLine: opt.MaxLine}, decode.chunk, sink.chunk)
	if err != nil {
		if tl := tooLong(f, err); tl != nil {
			return nil, tl
		}
		var re *linepool.ReadError
		if errors.As(err, &re) {
			return nil, streamError(f, hr, re.Line-1, re.Err)
		}
		return nil, err
	}
	if err := st.finish(); err != nil {
		return nil, streamError(f, hr, -1, err)
	}
	if err := tables.close(); err != nil {
		return nil, err
	}
	res := &mainResult{counters: sink.servers, jsonBytes: counted.n, defs: sink.defs.result()}
	if !opt.NoSensitivity {
		res.sens = &aggregate.Sensitivity{}
	}
	for _, w := range decode.workers {
		res.counters.Merge(w.counters)
		if res.sens != nil {
			res.sens.Merge(&w.sensCounts)
		}
		res.skipped.Count += w.skipN
		res.skipped.First = append(res.skipped.First, w.skipped...)
	}
	sort.Slice(res.skipped.First, func(i, j int) bool { return res.skipped.First[i].Line < res.skipped.First[j].Line })
	if len(res.skipped.First) > maxSkippedExamples {
		res.skipped.First = res.skipped.First[:maxSkippedExamples]
	}
	var records int64
	for _, n := range res.counters.Shapes {
		records += n
	}
	if res.counters.Tools == 0 {
		return nil, fmt.Errorf("%s: no tools in %d records", f.Name, records)
	}
	in.Bytes, in.SHA256, in.Records = hr.N(), hr.Sum(), records+res.skipped.Count
	return res, nil
}

// countingReader counts the bytes read through it: the decompressed ones,
// for the summary and for error positions, and the compressed ones, for
// Options.Progress, which report is then told after each read.
type countingReader struct {
	r      io.Reader
	n      int64
	report func(n int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.report != nil && n > 0 {
		c.report(c.n)
	}
	return n, err
}

// buildReport sets the merged counts beside the published table; the
// caller decides the report's kind and judges.
func buildReport(m *mainResult, inputs []report.Input, verified bool, manifestName string) *report.Report {
	c := m.counters
	published := report.Published()
	r := &report.Report{
		Verified:   verified,
		Snapshot:   published.Snapshot,
		Tools:      c.Tools,
		Servers:    int64(len(c.Servers)),
		Properties: c.Properties,
		Inputs:     inputs,
		Shapes:     c.Shapes,
		Classes:    map[string]report.Class{},
		Buckets:    map[string]report.Bucket{},
		Skipped:    m.skipped,
		ClassOrder: report.ClassOrder(),
	}
	if verified {
		r.Manifest = manifestName
	}
	if r.Skipped.First == nil {
		r.Skipped.First = []report.SkippedLine{}
	}
	for _, rule := range classify.Rules() {
		tools, req := c.Label(rule.Bit)
		if rule.Normative {
			pub := published.Classes[rule.ID]
			r.Classes[rule.ID] = report.Class{
				Row:           report.Row{Tools: tools, Percent: report.Percent(tools, c.Tools), Required: req},
				Published:     pub,
				DeltaTools:    tools - pub.Tools,
				DeltaRequired: req - pub.Required,
			}
			continue
		}
		pub := published.Buckets[rule.ID]
		r.Buckets[rule.ID] = report.Bucket{
			Tools: tools, Percent: report.Percent(tools, c.Tools),
			Published: pub, PublishedPercent: report.Percent(pub, published.Tools),
			DeltaTools: tools - pub, NonNormative: true,
		}
	}
	for fi, fig := range surfaceFigures {
		pub := published.Surface[fig.ID]
		sf := report.Surface{
			ID: fig.ID, Title: fig.Title, Rule: fig.Rule,
			Tools: c.Surface[fig.ID], Percent: report.Percent(c.Surface[fig.ID], c.Tools),
			Published: pub.Published, PublishedPercent: pub.PublishedPercent, PublishedServers: pub.PublishedServers,
			NonNormative: true,
		}
		if fig.CountServers {
			sf.Servers = c.ServersWith(1 << fi)
		}
		r.Surface = append(r.Surface, sf)
	}
	if m.sens != nil {
		r.Sensitivity = report.NewSensitivity(r, m.sens)
	}
	r.Definitions = m.defs
	return r
}
