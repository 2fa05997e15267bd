package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/atlas-reproduce/atlas-reproduce/classify"
	"github.com/atlas-reproduce/atlas-reproduce/sensitivity"
)

// batchRows is the number of rows buffered before a batch is handed to the
// Parquet writer: it bounds the builders' memory, and row groups follow row
// counts only, so files are identical for any worker count.
const batchRows = 32 * 1024

// ToolRow is one row of tools.parquet.
type ToolRow struct {
	ServerID    []byte
	HasServerID bool
	Name        []byte
	HasName     bool
	// Ordinal is the tool's 0-based position in server_tools.jsonl.gz.
	Ordinal    int64
	Line       int64
	Properties int32
	// Labels is the union of the labels of the tool's properties; Required
	// the union over its required properties.
	Labels, Required classify.Set
	// Sensitivity is what the non-normative variants add; nil when the run
	// did not compute them (the columns are then false).
	Sensitivity *sensitivity.Added
}

// PropertyRow is one row of properties.parquet.
type PropertyRow struct {
	ServerID    []byte
	HasServerID bool
	Tool        []byte
	HasTool     bool
	// ToolOrdinal joins the row to tools.parquet.
	ToolOrdinal int64
	Name        []byte
	Where       string
	Required    bool
	Labels      classify.Set
}

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

func (f *parquetFile) rowAdded() error {
	f.rows++
	if f.rows < batchRows {
		return nil
	}
	return f.flush()
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

// classBits are the five classes in spec order: tools.parquet has a column
// per class and per class-required.
var classBits = []classify.Set{classify.CredentialValue, classify.FilesystemPath, classify.CommandString, classify.MoneyAmount, classify.URLEndpoint}

// columnName turns a label id into a column name: gg:url-endpoint → url_endpoint.
func columnName(id string) string {
	return strings.ReplaceAll(strings.TrimPrefix(id, "gg:"), "-", "_")
}

// ToolsSchema is the schema of tools.parquet.
func ToolsSchema() *arrow.Schema {
	fields := []arrow.Field{
		{Name: "server_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tool", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ordinal", Type: arrow.PrimitiveTypes.Int64},
		{Name: "line", Type: arrow.PrimitiveTypes.Int64},
		{Name: "property_count", Type: arrow.PrimitiveTypes.Int32},
	}
	for _, b := range classBits {
		fields = append(fields, arrow.Field{Name: columnName(classify.RuleOf(b).ID), Type: arrow.FixedWidthTypes.Boolean})
	}
	for _, b := range classBits {
		fields = append(fields, arrow.Field{Name: columnName(classify.RuleOf(b).ID) + "_required", Type: arrow.FixedWidthTypes.Boolean})
	}
	for _, b := range []classify.Set{classify.RawContentBlob, classify.AccountIdentity} {
		fields = append(fields, arrow.Field{Name: classify.RuleOf(b).ID, Type: arrow.FixedWidthTypes.Boolean})
	}
	fields = sensitivityToolFields(fields)
	return arrow.NewSchema(fields, nil)
}

// PropertiesSchema is the schema of properties.parquet.
func PropertiesSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "server_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tool", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tool_ordinal", Type: arrow.PrimitiveTypes.Int64},
		{Name: "property", Type: arrow.BinaryTypes.String},
		{Name: "where", Type: arrow.BinaryTypes.String},
		{Name: "required", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "classes", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		{Name: "buckets", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	}, nil)
}

// TablesWriter streams tools.parquet and properties.parquet. It holds the
// column builders typed, once: a row is appended in the single sink
// goroutine, where a type assertion per column per row was measurable.
type TablesWriter struct {
	tools, props *parquetFile

	toolServer, toolName  *array.StringBuilder
	toolOrdinal, toolLine *array.Int64Builder
	toolProps             *array.Int32Builder
	// toolBools are the class, class-required and bucket columns in
	// schema order.
	toolBools []*array.BooleanBuilder

	propServer, propTool       *array.StringBuilder
	propOrdinal                *array.Int64Builder
	propName, propWhere        *array.StringBuilder
	propRequired               *array.BooleanBuilder
	propClasses, propBuckets   *array.ListBuilder
	propClassIDs, propBucketID *array.StringBuilder
}

// NewTablesWriter starts both files.
func NewTablesWriter(tools, properties io.Writer) (*TablesWriter, error) {
	t, err := newParquetFile(tools, ToolsSchema())
	if err != nil {
		return nil, fmt.Errorf("tools.parquet: %w", err)
	}
	p, err := newParquetFile(properties, PropertiesSchema())
	if err != nil {
		return nil, fmt.Errorf("properties.parquet: %w", err)
	}
	w := &TablesWriter{tools: t, props: p}
	tb, pb := t.b, p.b
	w.toolServer, w.toolName = tb.Field(0).(*array.StringBuilder), tb.Field(1).(*array.StringBuilder)
	w.toolOrdinal, w.toolLine = tb.Field(2).(*array.Int64Builder), tb.Field(3).(*array.Int64Builder)
	w.toolProps = tb.Field(4).(*array.Int32Builder)
	for i := 5; i < len(tb.Fields()); i++ {
		w.toolBools = append(w.toolBools, tb.Field(i).(*array.BooleanBuilder))
	}
	w.propServer, w.propTool = pb.Field(0).(*array.StringBuilder), pb.Field(1).(*array.StringBuilder)
	w.propOrdinal = pb.Field(2).(*array.Int64Builder)
	w.propName, w.propWhere = pb.Field(3).(*array.StringBuilder), pb.Field(4).(*array.StringBuilder)
	w.propRequired = pb.Field(5).(*array.BooleanBuilder)
	w.propClasses, w.propBuckets = pb.Field(6).(*array.ListBuilder), pb.Field(7).(*array.ListBuilder)
	w.propClassIDs = w.propClasses.ValueBuilder().(*array.StringBuilder)
	w.propBucketID = w.propBuckets.ValueBuilder().(*array.StringBuilder)
	return w, nil
}

// appendString appends b as a string value; Parquet strings must be UTF-8,
// so a lone surrogate or stray byte becomes U+FFFD there (the JSON outputs
// keep them).
func appendString(sb *array.StringBuilder, b []byte) {
	if utf8.Valid(b) {
		sb.BinaryBuilder.Append(b)
		return
	}
	sb.Append(strings.ToValidUTF8(string(b), "\uFFFD"))
}

// appendNullable appends b, or null when ok is false.
func appendNullable(sb *array.StringBuilder, b []byte, ok bool) {
	if ok {
		appendString(sb, b)
		return
	}
	sb.AppendNull()
}

// AddTool appends one tools.parquet row.
func (w *TablesWriter) AddTool(r *ToolRow) error {
	appendNullable(w.toolServer, r.ServerID, r.HasServerID)
	appendNullable(w.toolName, r.Name, r.HasName)
	w.toolOrdinal.Append(r.Ordinal)
	w.toolLine.Append(r.Line)
	w.toolProps.Append(r.Properties)
	col := 0
	for _, set := range [2]classify.Set{r.Labels, r.Required} {
		for _, bit := range classBits {
			w.toolBools[col].Append(set&bit != 0)
			col++
		}
	}
	for _, bit := range [2]classify.Set{classify.RawContentBlob, classify.AccountIdentity} {
		w.toolBools[col].Append(r.Labels&bit != 0)
		col++
	}
	appendSensitivity(w.toolBools[col:], r.Sensitivity)
	return w.tools.rowAdded()
}

// AddProperty appends one properties.parquet row.
func (w *TablesWriter) AddProperty(r *PropertyRow) error {
	appendNullable(w.propServer, r.ServerID, r.HasServerID)
	appendNullable(w.propTool, r.Tool, r.HasTool)
	w.propOrdinal.Append(r.ToolOrdinal)
	appendString(w.propName, r.Name)
	w.propWhere.Append(r.Where)
	w.propRequired.Append(r.Required)
	w.propClasses.Append(true)
	for _, id := range r.Labels.IDs(classify.Classes) {
		w.propClassIDs.Append(id)
	}
	w.propBuckets.Append(true)
	for _, id := range r.Labels.IDs(classify.Buckets) {
		w.propBucketID.Append(id)
	}
	return w.props.rowAdded()
}

// Close finishes both files.
func (w *TablesWriter) Close() error {
	err := w.tools.close()
	if perr := w.props.close(); err == nil {
		err = perr
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

// The sensitivity columns of tools.parquet, after the bucket columns:
// camel_case_<class> for each class, then word_split_<class>, then
// deep_<class> (class columns named as above, e.g.
// word_split_filesystem_path): true when the variant adds the class to the
// tool. The counts through required properties are in report.json and
// classify --sensitivity; here they would add ten columns to the costliest
// writer for little use. A run asked to skip the figures
// (Options.NoSensitivity) writes false: the columns stay non-nullable,
// which keeps them cheap to write.

// sensitivityToolFields appends the sensitivity columns' fields.
func sensitivityToolFields(fields []arrow.Field) []arrow.Field {
	for _, variant := range sensitivity.Variants {
		for _, b := range classBits {
			fields = append(fields, arrow.Field{Name: variant + "_" + columnName(classify.RuleOf(b).ID), Type: arrow.FixedWidthTypes.Boolean})
		}
	}
	return fields
}

// appendSensitivity appends one row's sensitivity columns to their builders,
// in sensitivityToolFields order.
func appendSensitivity(bools []*array.BooleanBuilder, a *sensitivity.Added) {
	var sets [3]classify.Set
	if a != nil {
		sets = [3]classify.Set{a.CamelCase, a.WordSplit, a.Deep}
	}
	col := 0
	for _, set := range sets {
		for _, bit := range classBits {
			bools[col].Append(set&bit != 0)
			col++
		}
	}
}
