package pipeline

import (
	"context"
	"sync/atomic"

	"github.com/atlas-reproduce/atlas-reproduce/aggregate"
	"github.com/atlas-reproduce/atlas-reproduce/internal/freelist"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline/linepool"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
)

// chunkRows are what the decode stage makes of one chunk: its tools.parquet
// and properties.parquet rows, column by column, and per tool what the sink
// needs to count servers. They are copied out of the decoder's memory, so
// that the chunk's buffer can be reused at once.
type chunkRows struct {
	tools tables.ToolsBatch
	props tables.PropertiesBatch
	// keys, hasServer and surface are per tool. surface has bit i set when
	// the tool counts in surfaceFigures[i].
	keys      []aggregate.ServerKey
	hasServer []bool
	surface   []uint8
	// nameKeys are the tools' name-ordinal keys (nameKeyer), computed by
	// the worker so that the sink only counts them.
	nameKeys [][2]uint64
	// firstOrdinal is the ordinal of the chunk's first tool, set by the
	// sink, which sees the chunks in order.
	firstOrdinal int64
	// pending counts the table writers that have yet to consume the rows.
	pending atomic.Int32
}

func (r *chunkRows) reset() {
	r.tools.Reset()
	r.props.Reset()
	r.keys, r.hasServer, r.surface, r.nameKeys = r.keys[:0], r.hasServer[:0], r.surface[:0], r.nameKeys[:0]
}

// rowsPool recycles chunkRows between the decode stage and the table
// writers, as many as the linepool has chunks in flight; kept across
// collections, their columns are not grown afresh chunk after chunk.
type rowsPool struct{ l *freelist.List[*chunkRows] }

func newRowsPool(workers int) *rowsPool {
	return &rowsPool{freelist.New(linepool.DefaultInFlight(workers), func() *chunkRows { return new(chunkRows) })}
}

func (p *rowsPool) get() *chunkRows { return p.l.Get() }

// maxPooledProps bounds the rows a recycled chunkRows may have held: the
// rows of a giant record (tens of thousands of tools) are left to the
// collector, so that one such record does not raise the memory of the rest
// of the run. A chunk of the default size holds a few thousand.
const maxPooledProps = 64 << 10

// done is called by each consumer of r; the last one recycles it.
func (p *rowsPool) done(r *chunkRows) {
	if r.pending.Add(-1) == 0 && r.props.Len() <= maxPooledProps {
		r.reset()
		p.l.Put(r)
	}
}

// decodeStage is the pipeline's per-chunk work: decode every record of a
// chunk, classify its properties, count, and fill the chunk's table rows.
// It runs on every worker at once; all it shares is read-only or, like the
// hasher and the pool, safe for concurrent use.
type decodeStage struct {
	file    string
	skipBad bool
	// noSens skips the non-normative sensitivity variants.
	noSens  bool
	hasher  *aggregate.Hasher
	seeds   nameSeeds
	pool    *rowsPool
	workers []*decodeWorker
}

// decodeWorker is the state one pipeline worker owns: no other goroutine
// touches it until the pipeline has finished.
type decodeWorker struct {
	dec      *census.Decoder
	counters *aggregate.Counters
	skipped  []report.SkippedLine
	skipN    int64
	// The sensitivity variants, counted apart from the normative counters.
	sens       sensitivity.Analyzer
	sensCounts aggregate.Sensitivity
	// batch gives each tool its definition and schema hashes, hashing
	// the tools of a chunk together (see settle); waitRows and waitTexts
	// are the rows and remembered texts waiting for them.
	batch     toolid.Batch
	names     nameKeyer
	waitRows  []waitRow
	waitTexts []waitText
	// results keeps what each tool text the decoder remembers gave, their
	// property classes carved from kept; scratch holds a tool's property
	// classes when its text is not remembered.
	results census.TextResults[textResult]
	kept    []classify.Set
	scratch []classify.Set

	// The chunk and the record being decoded.
	rows *chunkRows
	line int64
	key  aggregate.ServerKey
}

func newDecodeStage(file string, skipBad, noSens bool, workers int, pool *rowsPool, seeds nameSeeds) *decodeStage {
	s := &decodeStage{file: file, skipBad: skipBad, noSens: noSens, hasher: aggregate.NewHasher(), seeds: seeds, pool: pool}
	for range workers {
		dec := census.NewDecoder()
		dec.RememberTools()
		s.workers = append(s.workers, &decodeWorker{dec: dec, counters: aggregate.New()})
	}
	return s
}

// chunk is the pipeline's work function.
func (s *decodeStage) chunk(_ context.Context, w int, c *linepool.Chunk) (*chunkRows, error) {
	ws := s.workers[w]
	ws.rows = s.pool.get()
	err := c.Lines(func(line int64, text []byte) error { return s.record(ws, line, text) })
	ws.settle()
	rows := ws.rows
	ws.rows = nil
	if err != nil {
		return nil, err
	}
	rows.nameKeys = ws.names.keys(&s.seeds, &rows.tools, rows.nameKeys[:0])
	return rows, nil
}

// record decodes one line and hands each of its tools to tool.
func (s *decodeStage) record(ws *decodeWorker, line int64, text []byte) error {
	if census.IsBlank(text) {
		return nil
	}
	// Stream validates the whole record before Next gives its tools one
	// at a time: a giant record is never materialised.
	rec, err := ws.dec.Stream(text)
	if err != nil {
		if s.skipBad {
			ws.skipN++
			if len(ws.skipped) < maxSkippedExamples {
				ws.skipped = append(ws.skipped, report.SkippedLine{File: s.file, Line: line, Error: err.Error()})
			}
			return nil
		}
		return label.NewDecodeError(s.file, line, err)
	}
	ws.counters.Shapes[rec.Shape.String()]++
	ws.line, ws.key = line, aggregate.ServerKey{}
	if rec.HasServerID {
		ws.key = s.hasher.Key(rec.ServerID)
	}
	for {
		t, err := ws.dec.Next()
		if err != nil {
			return label.NewDecodeError(s.file, line, err)
		}
		if t == nil {
			return nil
		}
		ws.tool(rec, t, s.noSens)
	}
}

// tool classifies one tool of rec, counts it, and appends its rows: one to
// the tools table, one per property to the properties table. What the
// tool's text gives (classes, variants, surface, hashes) is computed once
// per text the decoder remembers.
func (ws *decodeWorker) tool(rec *census.Record, t *census.Tool, noSens bool) {
	rows := ws.rows
	ordinal := int64(rows.tools.Len())
	props := &rows.props
	var res *toolResult
	var labels []classify.Set
	if kept, ok := ws.results.Get(t); ok {
		res, labels = &kept.res, kept.labels
	} else {
		ws.scratch = ws.scratch[:0]
		r := ws.classify(t, noSens)
		if t.Text != (census.TextID{}) {
			ws.results.Put(t, textResult{r, ws.keep(ws.scratch)})
			ws.waitTexts = append(ws.waitTexts, waitText{t.Text, r.batched})
		}
		res, labels = &r, ws.scratch
	}
	for pi := range t.Properties {
		p := &t.Properties[pi]
		props.Labels = append(props.Labels, labels[pi])
		props.ToolOrdinal = append(props.ToolOrdinal, ordinal)
		props.Name.Append(p.Name)
		appendWhere(&props.Where, p.Where, p.DefKey)
		props.Required = append(props.Required, p.Required)
	}
	// Server ids are counted by the sink, in one set.
	ws.counters.AddTool(res.labels, res.required, len(t.Properties))
	if !noSens {
		ws.sensCounts.Add(&res.added)
	}
	for fi := range surfaceFigures {
		if res.surface&(1<<fi) != 0 {
			ws.counters.AddSurface(surfaceFigures[fi].ID)
		}
	}
	tools := &rows.tools
	tools.AppendServerID(rec.ServerID, rec.HasServerID)
	tools.Name.AppendNullable(t.Name, t.HasName)
	tools.Line = append(tools.Line, ws.line)
	tools.Properties = append(tools.Properties, int32(len(t.Properties)))
	tools.Labels = append(tools.Labels, res.labels)
	tools.Required = append(tools.Required, res.required)
	tools.CamelCase = append(tools.CamelCase, res.added.CamelCase)
	tools.WordSplit = append(tools.WordSplit, res.added.WordSplit)
	tools.Deep = append(tools.Deep, res.added.Deep)
	tools.Definition = append(tools.Definition, res.sums.Definition)
	tools.Schema = append(tools.Schema, res.sums.Schema)
	tools.HasSchema = append(tools.HasSchema, res.sums.HasSchema)
	rows.keys = append(rows.keys, ws.key)
	rows.hasServer = append(rows.hasServer, rec.HasServerID)
	rows.surface = append(rows.surface, res.surface)
	if res.batched != 0 {
		ws.waitRows = append(ws.waitRows, waitRow{ordinal, res.batched})
		if ws.batch.Size() >= maxBatchBytes {
			ws.settle()
		}
	}
}

// waitRow is a tools row whose hashes wait for the batch: its index in
// the chunk's rows and its tool's toolResult.batched.
type waitRow struct {
	row     int64
	batched int32
}

// waitText is a remembered tool text whose hashes wait for the batch.
type waitText struct {
	id      census.TextID
	batched int32
}

// maxBatchBytes bounds the canonical text a worker's batch holds: a
// giant record's tools are hashed as they come, not all at its end. A
// variable for the tests.
var maxBatchBytes = 256 << 10

// settle hashes the batch and gives its sums to the rows and remembered
// texts waiting for them. It runs before a chunk's rows leave the worker
// and whenever the batch has grown to maxBatchBytes.
func (ws *decodeWorker) settle() {
	if ws.batch.Len() == 0 {
		return
	}
	ws.batch.Hash()
	tools := &ws.rows.tools
	for _, w := range ws.waitRows {
		s := ws.batch.Sums(int(w.batched - 1))
		tools.Definition[w.row], tools.Schema[w.row] = s.Definition, s.Schema
	}
	for _, w := range ws.waitTexts {
		// The text may have been forgotten since, its slot given to
		// another.
		if kept, ok := ws.results.GetText(w.id); ok && kept.res.batched == w.batched {
			kept.res.sums, kept.res.batched = ws.batch.Sums(int(w.batched-1)), 0
		}
	}
	ws.batch.Reset()
	ws.waitRows, ws.waitTexts = ws.waitRows[:0], ws.waitTexts[:0]
}

// keep copies a remembered tool's property classes into kept, in chunks
// that the values of TextResults hold on to until it forgets them.
func (ws *decodeWorker) keep(labels []classify.Set) []classify.Set {
	if cap(ws.kept)-len(ws.kept) < len(labels) {
		ws.kept = make([]classify.Set, 0, max(keptChunk, len(labels)))
	}
	a := len(ws.kept)
	ws.kept = append(ws.kept, labels...)
	return ws.kept[a:len(ws.kept):len(ws.kept)]
}

// keptChunk is how many property classes one chunk of kept holds.
const keptChunk = 4096

// classify computes what t's text gives, and appends its properties'
// classes to ws.scratch.
func (ws *decodeWorker) classify(t *census.Tool, noSens bool) toolResult {
	var r toolResult
	for pi := range t.Properties {
		p := &t.Properties[pi]
		ps := classify.PropertyBytes(p.Name, p.Description)
		r.labels |= ps
		if p.Required {
			r.required |= ps
		}
		ws.scratch = append(ws.scratch, ps)
	}
	r.required &= classify.Classes
	if !noSens {
		r.added = ws.sens.Tool(t, r.labels)
	}
	s := classify.Surface(t.Name, t.Description)
	for fi := range surfaceFigures {
		if surfaceFigures[fi].Counts(s, r.labels) {
			r.surface |= 1 << fi
		}
	}
	r.sums.HasSchema = t.Schema != nil
	r.batched = int32(ws.batch.Add(t)) + 1
	return r
}

// appendWhere appends the where column: properties, definitions/<key> or
// $defs/<key>.
func appendWhere(c *tables.StringColumn, k census.WhereKind, key []byte) {
	switch k {
	case census.WhereDefinitions:
		c.AppendPrefixed("definitions/", key)
	case census.WhereDefs:
		c.AppendPrefixed("$defs/", key)
	default:
		c.Append(propertiesWhere)
	}
}

var propertiesWhere = []byte("properties")

// surfaceFigures are classify's tool-surface figures, copied once for the
// per-tool loops: bit i of a tool's surface mask stands for element i.
var surfaceFigures = classify.SurfaceFigures()
