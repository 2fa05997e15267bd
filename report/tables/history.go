package tables

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// historyBatch is history.parquet's rows (report.HistoryRow).
type historyBatch struct {
	Release, Class                                  StringColumn
	Date                                            []int32
	Normative                                       []bool
	Tools, LiveTools, Servers                       []int64
	Percent                                         []float64
	Required, Added, Removed, Changed, Gained, Lost optInt64s
}

// Len is the number of rows.
func (b *historyBatch) Len() int { return len(b.Normative) }

// Reset empties the batch.
func (b *historyBatch) Reset() { *b = historyBatch{} }

// dateColumn is a DATE column (days since 1970-01-01), which DuckDB, Spark
// and pandas read as a date.
func dateColumn[B any](name string, values func(*B) []int32) column[B] {
	return column[B]{
		node: must(schema.NewPrimitiveNodeLogical(name, parquet.Repetitions.Required, schema.DateLogicalType{}, parquet.Types.Int32, -1, -1)),
		write: func(cw file.ColumnChunkWriter, b *B, _ int64, _ *scratch) error {
			_, err := cw.(*file.Int32ColumnChunkWriter).WriteBatch(values(b), nil, nil)
			return err
		},
	}
}

// historyColumns is the schema of history.parquet: release, date, class,
// normative, tools, required, percent, live_tools, servers, then beside
// the release before tools_added, tools_removed, tools_changed, gained
// and lost.
func historyColumns() []column[historyBatch] {
	opt := func(name string, c func(*historyBatch) *optInt64s) column[historyBatch] {
		return countColumn(name, true, func(b *historyBatch, _ *scratch) ([]int64, []int16) { return c(b).get() })
	}
	count := func(name string, c func(*historyBatch) []int64) column[historyBatch] {
		return countColumn(name, false, func(b *historyBatch, _ *scratch) ([]int64, []int16) { return c(b), nil })
	}
	return []column[historyBatch]{
		stringColumn("release", false, func(b *historyBatch) (*StringColumn, []int32) { return &b.Release, nil }),
		dateColumn("date", func(b *historyBatch) []int32 { return b.Date }),
		stringColumn("class", false, func(b *historyBatch) (*StringColumn, []int32) { return &b.Class, nil }),
		boolColumn("normative", func(b *historyBatch, _ *scratch) []bool { return b.Normative }),
		count("tools", func(b *historyBatch) []int64 { return b.Tools }),
		opt("required", func(b *historyBatch) *optInt64s { return &b.Required }),
		float64Column("percent", func(b *historyBatch) []float64 { return b.Percent }),
		count("live_tools", func(b *historyBatch) []int64 { return b.LiveTools }),
		count("servers", func(b *historyBatch) []int64 { return b.Servers }),
		opt("tools_added", func(b *historyBatch) *optInt64s { return &b.Added }),
		opt("tools_removed", func(b *historyBatch) *optInt64s { return &b.Removed }),
		opt("tools_changed", func(b *historyBatch) *optInt64s { return &b.Changed }),
		opt("gained", func(b *historyBatch) *optInt64s { return &b.Gained }),
		opt("lost", func(b *historyBatch) *optInt64s { return &b.Lost }),
	}
}

// HistoryWriter streams history.parquet, a row at a time.
type HistoryWriter struct {
	t *table[historyBatch, *historyBatch]
}

// NewHistoryWriter starts history.parquet on w, with meta beside the
// version and rules every table carries.
func NewHistoryWriter(w io.Writer, meta ...KV) (*HistoryWriter, error) {
	t, err := newTable[historyBatch]("history.parquet", w, batchRows, historyColumns(), meta...)
	if err != nil {
		return nil, err
	}
	return &HistoryWriter{t: t}, nil
}

// Append adds a row; its date must be YYYY-MM-DD.
func (h *HistoryWriter) Append(r *report.HistoryRow) error {
	d, err := time.Parse(report.DateLayout, r.Date)
	if err != nil {
		return fmt.Errorf("history.parquet: release %s: date %q is not YYYY-MM-DD", r.Release, r.Date)
	}
	days := d.Unix() / 86400
	return h.t.append(1, func(b *historyBatch, _, _ int) {
		b.Release.Append([]byte(r.Release))
		b.Date = append(b.Date, int32(days))
		b.Class.Append([]byte(r.Class))
		b.Normative = append(b.Normative, r.Normative)
		b.Tools = append(b.Tools, r.Tools)
		b.Required.append(r.Required)
		b.Percent = append(b.Percent, r.Percent)
		b.LiveTools = append(b.LiveTools, r.LiveTools)
		b.Servers = append(b.Servers, r.Servers)
		b.Added.append(r.ToolsAdded)
		b.Removed.append(r.ToolsRemoved)
		b.Changed.append(r.ToolsChanged)
		b.Gained.append(r.Gained)
		b.Lost.append(r.Lost)
	})
}

// Close writes the last row group and the footer.
func (h *HistoryWriter) Close() error { return h.t.Close() }

// ReadHistory calls fn for every row of the history.parquet at path, in
// order. A file without one of the columns, or with one of another type,
// is an error naming the file.
func ReadHistory(ctx context.Context, path string, fn func(*report.HistoryRow) error) error {
	f, pf, err := openParquet(path)
	if err != nil {
		return err
	}
	defer closeParquet(f, pf)
	if _, _, err := checkedRows(path, f, pf); err != nil {
		return err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatch}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := historyRows(rr.RecordBatch(), fn); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func historyRows(rec arrow.RecordBatch, fn func(*report.HistoryRow) error) error {
	col := func(name string) (arrow.Array, error) {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("no %s column: not a history.parquet", name)
		}
		return rec.Column(idx[0]), nil
	}
	var (
		strs   = map[string]*array.String{"release": nil, "class": nil}
		ints   = map[string]*array.Int64{"tools": nil, "required": nil, "live_tools": nil, "servers": nil, "tools_added": nil, "tools_removed": nil, "tools_changed": nil, "gained": nil, "lost": nil}
		date   *array.Date32
		norm   *array.Boolean
		pct    *array.Float64
		typeOK = true
	)
	for name := range strs {
		a, err := col(name)
		if err != nil {
			return err
		}
		strs[name], typeOK = a.(*array.String)
		if !typeOK {
			return fmt.Errorf("column %s is %s, not a string", name, a.DataType())
		}
	}
	for name := range ints {
		a, err := col(name)
		if err != nil {
			return err
		}
		if ints[name], typeOK = a.(*array.Int64); !typeOK {
			return fmt.Errorf("column %s is %s, not an int64", name, a.DataType())
		}
	}
	for name, dst := range map[string]any{"date": &date, "normative": &norm, "percent": &pct} {
		a, err := col(name)
		if err != nil {
			return err
		}
		switch d := dst.(type) {
		case **array.Date32:
			*d, typeOK = a.(*array.Date32)
		case **array.Boolean:
			*d, typeOK = a.(*array.Boolean)
		case **array.Float64:
			*d, typeOK = a.(*array.Float64)
		}
		if !typeOK {
			return fmt.Errorf("column %s is %s", name, a.DataType())
		}
	}
	opt := func(name string, i int) *int64 {
		if ints[name].IsNull(i) {
			return nil
		}
		v := ints[name].Value(i)
		return &v
	}
	for i := range int(rec.NumRows()) {
		r := report.HistoryRow{
			Release: strs["release"].Value(i), Date: date.Value(i).ToTime().Format(report.DateLayout), Class: strs["class"].Value(i),
			Normative: norm.Value(i), Tools: ints["tools"].Value(i), Required: opt("required", i), Percent: pct.Value(i),
			LiveTools: ints["live_tools"].Value(i), Servers: ints["servers"].Value(i),
			ToolsAdded: opt("tools_added", i), ToolsRemoved: opt("tools_removed", i), ToolsChanged: opt("tools_changed", i),
			Gained: opt("gained", i), Lost: opt("lost", i),
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return nil
}

// ReadMetadata returns the key-value metadata of the Parquet file at path
// (the release a run's table is of: MetaReleaseID, MetaReleaseDate).
func ReadMetadata(path string) (map[string]string, error) {
	f, pf, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer closeParquet(f, pf)
	out := map[string]string{}
	kv := pf.MetaData().KeyValueMetadata()
	for i, k := range kv.Keys() {
		out[k] = kv.Values()[i]
	}
	return out, nil
}
