package report

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// batchRows is the number of rows of a row group of every table: row groups
// follow row counts only, so files are identical for any worker count.
const batchRows = 32 * 1024

// parquetFile is one Parquet file written in row batches.
type parquetFile struct {
	fw   *pqarrow.FileWriter
	b    *array.RecordBuilder
	rows int
}

func newParquetFile(w io.Writer, schema *arrow.Schema) (*parquetFile, error) {
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(batchRows),
		parquet.WithCreatedBy("atlas-reproduce"),
	)
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, err
	}
	return &parquetFile{fw: fw, b: array.NewRecordBuilder(memory.DefaultAllocator, schema)}, nil
}

func (f *parquetFile) flush() error {
	if f.rows == 0 {
		return nil
	}
	rec := f.b.NewRecordBatch()
	defer rec.Release()
	f.rows = 0
	// Write, not WriteBuffered: each batch becomes a row group at once, so
	// the writer never holds more than one batch.
	return f.fw.Write(rec)
}

func (f *parquetFile) close() error {
	err := f.flush()
	f.b.Release()
	if cerr := f.fw.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteClassesParquet writes classes.parquet: the class table beside the
// published one, then the buckets (normative = false).
func (r *Report) WriteClassesParquet(w io.Writer) error {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "label", Type: arrow.BinaryTypes.String},
		{Name: "normative", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "tools", Type: arrow.PrimitiveTypes.Int64},
		{Name: "percent", Type: arrow.PrimitiveTypes.Float64},
		{Name: "required", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "published_tools", Type: arrow.PrimitiveTypes.Int64},
		{Name: "published_percent", Type: arrow.PrimitiveTypes.Float64},
		{Name: "published_required", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "delta_tools", Type: arrow.PrimitiveTypes.Int64},
		{Name: "delta_required", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	f, err := newParquetFile(w, schema)
	if err != nil {
		return err
	}
	b := f.b
	row := func(id string, normative bool, tools int64, pct float64, req *int64, ptools int64, ppct float64, preq *int64, dt int64, dr *int64) {
		b.Field(0).(*array.StringBuilder).Append(id)
		b.Field(1).(*array.BooleanBuilder).Append(normative)
		b.Field(2).(*array.Int64Builder).Append(tools)
		b.Field(3).(*array.Float64Builder).Append(pct)
		for i, v := range []*int64{req} {
			appendOpt(b.Field(4+i).(*array.Int64Builder), v)
		}
		b.Field(5).(*array.Int64Builder).Append(ptools)
		b.Field(6).(*array.Float64Builder).Append(ppct)
		appendOpt(b.Field(7).(*array.Int64Builder), preq)
		b.Field(8).(*array.Int64Builder).Append(dt)
		appendOpt(b.Field(9).(*array.Int64Builder), dr)
		f.rows++
	}
	for _, id := range r.ClassOrder {
		c := r.Classes[id]
		row(id, true, c.Tools, c.Percent, &c.Required, c.Published.Tools, c.Published.Percent, &c.Published.Required, c.DeltaTools, &c.DeltaRequired)
	}
	for _, id := range sortedKeys(r.Buckets) {
		bk := r.Buckets[id]
		row(id, false, bk.Tools, bk.Percent, nil, bk.Published, bk.PublishedPercent, nil, bk.DeltaTools, nil)
	}
	return f.close()
}

func appendOpt(b *array.Int64Builder, v *int64) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(*v)
}
