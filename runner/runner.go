// Package runner carries out one census run: it finds the snapshot's files,
// verifies their SHA-256 on the read that decompresses them, decodes and
// classifies every tool through the pipeline's worker pool, merges the
// per-worker counters, and publishes report.json, report.md and the Parquet
// tables — all of them, or none.
package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/pgzip"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/sync/errgroup"

	"github.com/atlas-reproduce/atlas-reproduce/census"
	"github.com/atlas-reproduce/atlas-reproduce/classify"
	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/aggregate"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/sensitivity"
	"github.com/atlas-reproduce/atlas-reproduce/source"
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
	// SkipBad passes over bad lines, counting them, instead of failing.
	SkipBad bool
	// NoSensitivity skips the non-normative sensitivity variants, to measure
	// their cost and to show that no normative figure depends on them: the
	// report then has no sensitivity figures, and their tools.parquet
	// columns are null.
	NoSensitivity bool
	// Progress receives progress bars; nil draws none.
	Progress io.Writer
	// Log receives the one-line summary; nil discards it.
	Log io.Writer
}

// maxSkippedExamples is how many skipped lines the report lists.
const maxSkippedExamples = 10

// LineError is a bad line of an input file.
type LineError struct {
	File string
	Line int64
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s: line %d: %v", e.File, e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Run carries out a run and returns its report. On any error nothing is
// published under a final name.
func Run(ctx context.Context, opt Options) (*report.Report, error) {
	start := time.Now()
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	manifest, manifestName := opt.Manifest, opt.ManifestName
	if manifest == nil {
		manifest, manifestName = hashverify.Pinned, "pinned (the spec's)"
	}
	if !opt.NoVerify {
		for _, name := range hashverify.SnapshotFiles {
			if _, ok := manifest[name]; !ok {
				return nil, fmt.Errorf("%s: the manifest %s lists no SHA-256 for it", name, manifestName)
			}
		}
	}

	src, err := source.Open(opt.Data)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	files := make(map[string]*source.File, len(hashverify.SnapshotFiles))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, name := range hashverify.SnapshotFiles {
		f, err := src.Open(name)
		if err != nil {
			return nil, err
		}
		files[name] = f
	}

	out, err := newOutputs(opt.Out)
	if err != nil {
		return nil, err
	}
	defer out.abort()
	toolsF, err := out.create("tools.parquet")
	if err != nil {
		return nil, err
	}
	propsF, err := out.create("properties.parquet")
	if err != nil {
		return nil, err
	}

	inputs := make([]report.Input, len(hashverify.SnapshotFiles))
	var main *mainResult
	g, gctx := errgroup.WithContext(ctx)
	for i, name := range hashverify.SnapshotFiles {
		f := files[name]
		inputs[i] = report.Input{Name: name, Location: f.Location}
		if name == hashverify.ToolsFile {
			g.Go(func() error {
				var err error
				main, err = runTools(gctx, opt, f, toolsF, propsF, &inputs[i])
				return err
			})
			continue
		}
		g.Go(func() error { return countRecords(gctx, f, &inputs[i]) })
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
		return nil, fmt.Errorf("verification failed, no report written: %w", errors.Join(mismatches...))
	}

	r := buildReport(main, inputs, verified, manifestName, !opt.NoVerify && manifest.IsPinned())
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"classes.parquet", r.WriteClassesParquet},
		{"report.json", r.WriteJSON},
		{"report.md", r.WriteMarkdown},
		{"report.html", r.WriteHTML},
	} {
		f, err := out.create(w.name)
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
	if err := out.commit(); err != nil {
		return nil, err
	}
	if opt.Log != nil {
		el := time.Since(start)
		fmt.Fprintf(opt.Log, "%s: %d tools on %d servers in %.2fs (%.1f MB of JSON, %.0f MB/s, %d workers); verdict %s; outputs in %s\n",
			hashverify.ToolsFile, r.Tools, r.Servers, el.Seconds(), float64(main.jsonBytes)/1e6,
			float64(main.jsonBytes)/1e6/el.Seconds(), opt.Workers, r.Verdict, opt.Out)
	}
	return r, nil
}

// stream is a census file opened for reading: its decompressed content,
// with the raw bytes hashed on the way.
type stream struct {
	io.Reader
	hr   *hashverify.Reader
	zr   *pgzip.Reader // nil for a file that is not gzipped
	once sync.Once
	cerr error
}

// close stops the decompressor's read-ahead goroutine. Every path defers it:
// a run that fails or is cancelled mid-file must not leave the goroutine
// behind. pgzip's Close may run only once.
func (s *stream) close() error {
	s.once.Do(func() {
		if s.zr != nil {
			s.cerr = s.zr.Close()
		}
	})
	return s.cerr
}

// finish closes the decompressor and drains what it left unread, so that
// the hash covers the whole file.
func (s *stream) finish() error {
	err := s.close()
	if _, derr := io.Copy(io.Discard, s.hr); err == nil {
		err = derr
	}
	return err
}

// openStream opens f for reading; the caller must close the stream.
func openStream(f *source.File, progress io.Writer) (*stream, error) {
	if f.Size == 0 {
		return nil, fmt.Errorf("%s: empty file (%s)", f.Name, f.Location)
	}
	var raw io.Reader = f
	if progress != nil {
		bar := progressbar.NewOptions64(f.Size,
			progressbar.OptionSetWriter(progress),
			progressbar.OptionSetDescription(f.Name),
			progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		raw = io.TeeReader(raw, bar)
	}
	s := &stream{hr: hashverify.NewReader(raw)}
	if !strings.HasSuffix(f.Name, ".gz") {
		s.Reader = s.hr
		return s, nil
	}
	// pgzip decompresses on its own goroutine and reads ahead, so the
	// worker pool never waits on the inflater for long.
	zr, err := pgzip.NewReaderN(s.hr, 1<<20, 4)
	if err != nil {
		return nil, fmt.Errorf("%s: not a gzip stream: %w", f.Name, err)
	}
	s.Reader, s.zr = zr, zr
	return s, nil
}

// countRecords hashes a side file and counts its non-blank lines.
func countRecords(ctx context.Context, f *source.File, in *report.Input) error {
	st, err := openStream(f, nil)
	if err != nil {
		return err
	}
	defer st.close()
	hr := st.hr
	lr := census.NewLineReader(st)
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

func streamError(f *source.File, hr *hashverify.Reader, line int64, err error) error {
	what := "read"
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) {
		what = "corrupt or truncated gzip"
	}
	at := ""
	if line >= 0 {
		at = fmt.Sprintf(", at line %d", line+1)
	}
	return fmt.Errorf("%s: %s: %v (after %d of %d compressed bytes%s)", f.Location, what, err, hr.N(), f.Size, at)
}

// mainResult is what the server_tools pass yields.
type mainResult struct {
	counters  *aggregate.Counters
	sens      *aggregate.Sensitivity // nil when not computed
	skipped   report.Skipped
	jsonBytes int64
}

// worker is the state one pipeline worker owns: no other goroutine touches
// it until the pipeline has finished.
type worker struct {
	dec      *census.Decoder
	counters *aggregate.Counters
	skipped  []report.SkippedLine
	skipN    int64
	// The sensitivity variants, counted apart from the normative counters.
	sens       sensitivity.Analyzer
	sensCounts aggregate.Sensitivity
}

// chunkRows are the rows of one chunk, copied out of the decoder's memory
// into one arena so that the chunk's buffer can be reused at once.
type chunkRows struct {
	arena []byte
	tools []toolRow
	props []propRow
}

type span struct{ off, end int32 }

type toolRow struct {
	key aggregate.ServerKey
	// surface has bit i set when the tool counts in classify.SurfaceFigures[i].
	surface            uint8
	server, name       span
	hasServer, hasName bool
	line               int64
	props              int32
	labels, required   classify.Set
	sens               sensitivity.Added
}

type propRow struct {
	name, defKey span
	where        census.WhereKind
	required     bool
	labels       classify.Set
}

func (c *chunkRows) put(b []byte) span {
	off := len(c.arena)
	c.arena = append(c.arena, b...)
	return span{int32(off), int32(len(c.arena))}
}

func (c *chunkRows) get(s span) []byte { return c.arena[s.off:s.end] }

func runTools(ctx context.Context, opt Options, f *source.File, toolsF, propsF io.Writer, in *report.Input) (*mainResult, error) {
	st, err := openStream(f, opt.Progress)
	if err != nil {
		return nil, err
	}
	defer st.close()
	hr := st.hr
	hasher := aggregate.NewHasher()
	workers := make([]*worker, opt.Workers)
	for i := range workers {
		workers[i] = &worker{dec: census.NewDecoder(), counters: aggregate.New()}
	}
	toolsBuf, propsBuf := bufio.NewWriterSize(toolsF, 1<<20), bufio.NewWriterSize(propsF, 1<<20)
	tables, err := report.NewTablesWriter(toolsBuf, propsBuf)
	if err != nil {
		return nil, err
	}
	rowsPool := sync.Pool{New: func() any { return new(chunkRows) }}
	var ordinal int64

	work := func(ctx context.Context, w int, c *pipeline.Chunk) (*chunkRows, error) {
		ws := workers[w]
		rows := rowsPool.Get().(*chunkRows)
		err := c.Lines(func(line int64, text []byte) error {
			if census.IsBlank(text) {
				return nil
			}
			rec, err := ws.dec.Decode(text)
			if err != nil {
				if opt.SkipBad {
					ws.skipN++
					if len(ws.skipped) < maxSkippedExamples {
						ws.skipped = append(ws.skipped, report.SkippedLine{File: f.Name, Line: line, Error: err.Error()})
					}
					return nil
				}
				return &LineError{File: f.Name, Line: line, Err: err}
			}
			ws.counters.Shapes[rec.Shape.String()]++
			var key aggregate.ServerKey
			if rec.HasServerID {
				key = hasher.Key(rec.ServerID)
			}
			// One copy of the server id serves every tool of the record.
			server := rows.put(rec.ServerID)
			for ti := range rec.Tools {
				t := &rec.Tools[ti]
				tr := toolRow{key: key, server: server, line: line, hasServer: rec.HasServerID, hasName: t.HasName, props: int32(len(t.Properties))}
				tr.name = rows.put(t.Name)
				for pi := range t.Properties {
					p := &t.Properties[pi]
					l := classify.PropertyBytes(p.Name, p.Description)
					tr.labels |= l
					if p.Required {
						tr.required |= l
					}
					rows.props = append(rows.props, propRow{name: rows.put(p.Name), defKey: rows.put(p.DefKey), where: p.Where, required: p.Required, labels: l})
				}
				// Server ids are counted by the sink, in one set.
				ws.counters.AddTool(tr.labels, tr.required&classify.Classes, len(t.Properties))
				if !opt.NoSensitivity {
					tr.sens = ws.sens.Tool(t, tr.labels)
					ws.sensCounts.Add(&tr.sens)
				}
				surface := classify.Surface(t.Name, t.Description)
				for fi := range classify.SurfaceFigures {
					if fig := &classify.SurfaceFigures[fi]; fig.Counts(surface, tr.labels) {
						ws.counters.AddSurface(fig.ID)
						tr.surface |= 1 << fi
					}
				}
				rows.tools = append(rows.tools, tr)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return rows, nil
	}

	// servers holds the distinct server ids, kept by the sink alone: one set
	// for the run instead of one per worker.
	servers := aggregate.New()
	var lastKey aggregate.ServerKey
	var lastFlags uint8
	haveLast := false
	sink := func(rows *chunkRows) error {
		pi := 0
		for ti := range rows.tools {
			t := &rows.tools[ti]
			if t.hasServer {
				var flags uint8
				for fi := range classify.SurfaceFigures {
					if classify.SurfaceFigures[fi].CountServers && t.surface&(1<<fi) != 0 {
						flags |= 1 << fi
					}
				}
				// Tools of one server come together in most files: skip
				// the map for a repeat of the previous id and its flags.
				if !haveLast || t.key != lastKey {
					lastKey, lastFlags, haveLast = t.key, 0, true
					servers.AddServer(t.key, flags)
				} else if flags&^lastFlags != 0 {
					servers.AddServer(t.key, flags)
				}
				lastFlags |= flags
			}
			var sens *sensitivity.Added
			if !opt.NoSensitivity {
				sens = &t.sens
			}
			if err := tables.AddTool(&report.ToolRow{
				ServerID: rows.get(t.server), HasServerID: t.hasServer, Name: rows.get(t.name), HasName: t.hasName,
				Ordinal: ordinal, Line: t.line, Properties: t.props, Labels: t.labels, Required: t.required & classify.Classes,
				Sensitivity: sens,
			}); err != nil {
				return fmt.Errorf("tools.parquet: %w", err)
			}
			for end := pi + int(t.props); pi < end; pi++ {
				p := &rows.props[pi]
				if err := tables.AddProperty(&report.PropertyRow{
					ServerID: rows.get(t.server), HasServerID: t.hasServer, Tool: rows.get(t.name), HasTool: t.hasName,
					ToolOrdinal: ordinal, Name: rows.get(p.name), Where: whereString(p.where, rows.get(p.defKey)),
					Required: p.required, Labels: p.labels,
				}); err != nil {
					return fmt.Errorf("properties.parquet: %w", err)
				}
			}
			ordinal++
		}
		rows.arena, rows.tools, rows.props = rows.arena[:0], rows.tools[:0], rows.props[:0]
		rowsPool.Put(rows)
		return nil
	}

	counted := &countingReader{r: st}
	err = pipeline.Run(ctx, counted, pipeline.Config{Workers: opt.Workers, ChunkSize: opt.ChunkSize}, work, sink)
	if err != nil {
		var re *pipeline.ReadError
		if errors.As(err, &re) {
			return nil, streamError(f, hr, re.Line-1, re.Err)
		}
		return nil, err
	}
	if err := st.finish(); err != nil {
		return nil, streamError(f, hr, -1, err)
	}
	if err := tables.Close(); err != nil {
		return nil, fmt.Errorf("writing Parquet: %w", err)
	}
	for _, b := range []*bufio.Writer{toolsBuf, propsBuf} {
		if err := b.Flush(); err != nil {
			return nil, fmt.Errorf("writing Parquet: %w", err)
		}
	}
	res := &mainResult{counters: servers, jsonBytes: counted.n}
	if !opt.NoSensitivity {
		res.sens = &aggregate.Sensitivity{}
	}
	for _, w := range workers {
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

// countingReader counts the decompressed bytes, for the summary and for
// error positions.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func whereString(k census.WhereKind, key []byte) string {
	switch k {
	case census.WhereDefinitions:
		return "definitions/" + string(key)
	case census.WhereDefs:
		return "$defs/" + string(key)
	}
	return "properties"
}

// buildReport sets the merged counts beside the published table and judges.
func buildReport(m *mainResult, inputs []report.Input, verified bool, manifestName string, pinned bool) *report.Report {
	c := m.counters
	r := &report.Report{
		Verified:   verified,
		Snapshot:   report.Published.Snapshot,
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
	for _, rule := range classify.Rules {
		tools, req := c.Label(rule.Bit)
		if rule.Normative {
			pub := report.Published.Classes[rule.ID]
			r.Classes[rule.ID] = report.Class{
				Row:           report.Row{Tools: tools, Percent: report.Percent(tools, c.Tools), Required: req},
				Published:     pub,
				DeltaTools:    tools - pub.Tools,
				DeltaRequired: req - pub.Required,
			}
			continue
		}
		pub := report.Published.Buckets[rule.ID]
		r.Buckets[rule.ID] = report.Bucket{
			Tools: tools, Percent: report.Percent(tools, c.Tools),
			Published: pub, PublishedPercent: report.Percent(pub, report.Published.Tools),
			DeltaTools: tools - pub, NonNormative: true,
		}
	}
	for fi, fig := range classify.SurfaceFigures {
		pub := report.Published.Surface[fig.ID]
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
		r.Sensitivity = report.NewSensitivity(r, &m.sens.SensitivityCounts)
	}
	r.Judge(pinned)
	return r
}
