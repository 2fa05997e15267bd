package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/atlas-reproduce/atlas-reproduce/classify"
	"github.com/atlas-reproduce/atlas-reproduce/sensitivity"
)

// tools.parquet and properties.parquet are written with the Parquet column
// writers directly, from batches held column by column: a worker fills a
// batch for its chunk (where the work is parallel), and the writer only
// copies it into the current row group and encodes each column of a full
// row group in one call. No Arrow arrays are built on the way.

// StringColumn is a column of strings laid out as Arrow lays them out: the
// bytes of every value one after the other and each row's end offset. A
// null row has no bytes.
type StringColumn struct {
	data []byte
	ends []int32
	null []bool
}

// Len is the number of rows.
func (c *StringColumn) Len() int { return len(c.ends) }

// Append appends b. Parquet strings must be UTF-8, so a lone surrogate or a
// stray byte becomes U+FFFD here (the JSON outputs keep them).
func (c *StringColumn) Append(b []byte) {
	if utf8.Valid(b) {
		c.data = append(c.data, b...)
	} else {
		c.data = append(c.data, strings.ToValidUTF8(string(b), "\uFFFD")...)
	}
	c.ends = append(c.ends, int32(len(c.data)))
	c.null = append(c.null, false)
}

// AppendPrefixed appends prefix followed by b, as one value.
func (c *StringColumn) AppendPrefixed(prefix string, b []byte) {
	c.data = append(c.data, prefix...)
	c.Append(b)
}

// AppendNullable appends b, or a null when ok is false.
func (c *StringColumn) AppendNullable(b []byte, ok bool) {
	if ok {
		c.Append(b)
		return
	}
	c.ends = append(c.ends, int32(len(c.data)))
	c.null = append(c.null, true)
}

// lastIs reports whether the column's last value is b (a null when ok is
// false). A value stored with its invalid UTF-8 replaced never equals b.
func (c *StringColumn) lastIs(b []byte, ok bool) bool {
	n := c.Len()
	if n == 0 {
		return false
	}
	if !ok || c.null[n-1] {
		return !ok && c.null[n-1]
	}
	return bytes.Equal(c.data[c.start(n-1):c.ends[n-1]], b)
}

// Reset empties the column, keeping its memory.
func (c *StringColumn) Reset() {
	c.data, c.ends, c.null = c.data[:0], c.ends[:0], c.null[:0]
}

func (c *StringColumn) start(row int) int32 {
	if row == 0 {
		return 0
	}
	return c.ends[row-1]
}

// appendRows appends rows [from, to) of src.
func (c *StringColumn) appendRows(src *StringColumn, from, to int) {
	lo, hi := src.start(from), src.start(to)
	shift := int32(len(c.data)) - lo
	c.data = append(c.data, src.data[lo:hi]...)
	for _, e := range src.ends[from:to] {
		c.ends = append(c.ends, e+shift)
	}
	c.null = append(c.null, src.null[from:to]...)
}

// ToolsBatch is a run of tools.parquet rows, column by column. The ordinal
// column is not held: it is the row's position in the file.
type ToolsBatch struct {
	// ServerID holds one value per run of rows with the same server id
	// (a record's tools share one), and serverRef each row's value: a
	// record of tens of thousands of tools keeps its id once. Fill it
	// with AppendServerID.
	ServerID   StringColumn
	serverRef  []int32
	Name       StringColumn
	Line       []int64
	Properties []int32
	// Labels is the union of the labels of each tool's properties;
	// Required the union over its required properties. Each boolean group
	// of the schema (toolsColumns) reads one of these sets.
	Labels, Required []classify.Set
	// CamelCase, WordSplit and Deep are the classes each non-normative
	// sensitivity variant adds to the tool (zero when the run skips them).
	CamelCase, WordSplit, Deep []classify.Set
}

// Len is the number of rows.
func (b *ToolsBatch) Len() int { return len(b.Line) }

// AppendServerID appends a row's server id, or a null when ok is false,
// sharing the previous row's value when it is the same.
func (b *ToolsBatch) AppendServerID(id []byte, ok bool) {
	if !b.ServerID.lastIs(id, ok) {
		b.ServerID.AppendNullable(id, ok)
	}
	b.serverRef = append(b.serverRef, int32(b.ServerID.Len()-1))
}

// Reset empties the batch, keeping its memory.
func (b *ToolsBatch) Reset() {
	b.ServerID.Reset()
	b.serverRef = b.serverRef[:0]
	b.Name.Reset()
	b.Line, b.Properties, b.Labels, b.Required = b.Line[:0], b.Properties[:0], b.Labels[:0], b.Required[:0]
	b.CamelCase, b.WordSplit, b.Deep = b.CamelCase[:0], b.WordSplit[:0], b.Deep[:0]
}

func (b *ToolsBatch) appendRows(src *ToolsBatch, from, to int) {
	for _, r := range src.serverRef[from:to] {
		b.appendServerRef(src, int(r))
	}
	b.Name.appendRows(&src.Name, from, to)
	b.Line = append(b.Line, src.Line[from:to]...)
	b.Properties = append(b.Properties, src.Properties[from:to]...)
	b.Labels = append(b.Labels, src.Labels[from:to]...)
	b.Required = append(b.Required, src.Required[from:to]...)
	b.CamelCase = append(b.CamelCase, src.CamelCase[from:to]...)
	b.WordSplit = append(b.WordSplit, src.WordSplit[from:to]...)
	b.Deep = append(b.Deep, src.Deep[from:to]...)
}

// appendServerRef appends a row whose server id is value r of src's,
// copying the value only when it differs from this batch's last one.
func (b *ToolsBatch) appendServerRef(src *ToolsBatch, r int) {
	c := &src.ServerID
	if !b.ServerID.lastIs(c.data[c.start(r):c.ends[r]], !c.null[r]) {
		b.ServerID.appendRows(c, r, r+1)
	}
	b.serverRef = append(b.serverRef, int32(b.ServerID.Len()-1))
}

// PropertiesBatch is a run of properties.parquet rows, column by column.
// A worker leaves ServerID and Tool empty: they are its tool's, and the
// writer takes them from the chunk's ToolsBatch as it buffers the rows,
// once per tool, so a record's server id is copied neither per property
// on the hot path nor in the row group.
type PropertiesBatch struct {
	ServerID, Tool, Name, Where StringColumn
	// ToolOrdinal is the ordinal of the row's tool. In a chunk's batch it
	// counts from the chunk's first tool (it is the row's index in the
	// chunk's ToolsBatch); in the writer's row group, from the file's.
	ToolOrdinal []int64
	Required    []bool
	Labels      []classify.Set

	// In the writer's row group, ServerID and Tool have one value per tool
	// and toolRef gives each row's; lastOrdinal is the last tool's.
	toolRef     []int32
	lastOrdinal int64
}

// Len is the number of rows.
func (b *PropertiesBatch) Len() int { return len(b.Required) }

// Reset empties the batch, keeping its memory.
func (b *PropertiesBatch) Reset() {
	for _, c := range []*StringColumn{&b.ServerID, &b.Tool, &b.Name, &b.Where} {
		c.Reset()
	}
	b.ToolOrdinal, b.Required, b.Labels, b.toolRef = b.ToolOrdinal[:0], b.Required[:0], b.Labels[:0], b.toolRef[:0]
}

// appendRows appends rows [from, to) of a chunk's batch src, taking the
// server id and tool name of each row's tool from the chunk's tools.
func (b *PropertiesBatch) appendRows(src *PropertiesBatch, tools *ToolsBatch, from, to int, firstOrdinal int64) {
	for _, o := range src.ToolOrdinal[from:to] {
		ord := firstOrdinal + o
		if b.ServerID.Len() == 0 || ord != b.lastOrdinal {
			r := int(tools.serverRef[o])
			b.ServerID.appendRows(&tools.ServerID, r, r+1)
			b.Tool.appendRows(&tools.Name, int(o), int(o)+1)
			b.lastOrdinal = ord
		}
		b.toolRef = append(b.toolRef, int32(b.ServerID.Len()-1))
		b.ToolOrdinal = append(b.ToolOrdinal, ord)
	}
	b.Name.appendRows(&src.Name, from, to)
	b.Where.appendRows(&src.Where, from, to)
	b.Required = append(b.Required, src.Required[from:to]...)
	b.Labels = append(b.Labels, src.Labels[from:to]...)
}

// column is one Parquet column of a table whose row groups are buffered as
// a B: its schema node, its encoding, and how a row group's values are
// handed to the column writer (first is the file's row number of the row
// group's first row).
type column[B any] struct {
	node  schema.Node
	props []parquet.WriterProperty
	write func(cw file.ColumnChunkWriter, b *B, first int64, s *scratch) error
}

// scratch is the memory the column writes reuse from one row group to the
// next.
type scratch struct {
	ids      map[string]int32
	dict     []byte
	dictEnds []int32
	idx      []int32
	valid    []byte
	values   []parquet.ByteArray
	defs     []int16
	bools    []bool
	ints     []int64
}

func must(n schema.Node, err error) schema.Node {
	if err != nil {
		panic(err) // the schemas are fixed: an error is a bug
	}
	return n
}

// stringColumn is a string column; nullable ones have definition levels.
// Strings are dictionary-encoded (ids and names repeat) without statistics,
// whose byte comparisons cost more than they serve. get returns the
// column's values and, when rows share them, each row's value index (nil:
// row i has value i).
func stringColumn[B any](name string, nullable bool, get func(*B) (*StringColumn, []int32)) column[B] {
	rep := parquet.Repetitions.Required
	if nullable {
		rep = parquet.Repetitions.Optional
	}
	return column[B]{
		node:  must(schema.NewPrimitiveNodeLogical(name, rep, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)),
		props: []parquet.WriterProperty{parquet.WithStatsFor(name, false)},
		write: func(cw file.ColumnChunkWriter, b *B, _ int64, s *scratch) error {
			c, refs := get(b)
			v := stringRows{c: c, refs: refs}
			var defs []int16
			if nullable {
				s.defs = s.defs[:0]
				for i := range v.len() {
					s.defs = append(s.defs, int16(boolInt(!c.null[v.ref(i)])))
				}
				defs = s.defs
			}
			return writeStrings(cw.(*file.ByteArrayColumnChunkWriter), v, defs, s)
		},
	}
}

// stringRows are the rows of a string column: row i has value ref(i).
type stringRows struct {
	c    *StringColumn
	refs []int32
}

func (v stringRows) len() int {
	if v.refs != nil {
		return len(v.refs)
	}
	return v.c.Len()
}

func (v stringRows) ref(i int) int {
	if v.refs != nil {
		return int(v.refs[i])
	}
	return i
}

func (v stringRows) value(e int) []byte {
	lo, hi := v.c.start(e), v.c.ends[e]
	return v.c.data[lo:hi:hi]
}

// dictionaryEncoder is what a column writer's dictionary encoder offers
// beyond the encoder interface: it can be seeded with a whole dictionary.
type dictionaryEncoder interface {
	PutDictionary(arrow.Array) error
}

// writeStrings writes a row group's strings. The column writer's own
// dictionary encoder would hash every value; here the dictionary is built
// once per row group with a Go map consulted only where a value differs
// from the previous row's (server ids and tool names come in long runs),
// and the writer receives the dictionary and the indices.
func writeStrings(cw *file.ByteArrayColumnChunkWriter, v stringRows, defs []int16, s *scratch) error {
	c, rows := v.c, v.len()
	enc, ok := cw.CurrentEncoder().(dictionaryEncoder)
	if !ok || cw.CurrentEncoder().Encoding() != parquet.Encodings.PlainDict {
		// Dictionary encoding is off for this column: plain values.
		s.values = s.values[:0]
		for i := range rows {
			if e := v.ref(i); !c.null[e] {
				s.values = append(s.values, v.value(e))
			}
		}
		_, err := cw.WriteBatch(s.values, defs, nil)
		return err
	}
	if s.ids == nil {
		s.ids = make(map[string]int32)
	}
	clear(s.ids)
	s.dict, s.dictEnds, s.idx = s.dict[:0], append(s.dictEnds[:0], 0), s.idx[:0]
	var prev []byte
	id, prevEntry, nulls := int32(-1), -1, 0
	for i := range rows {
		e := v.ref(i)
		if c.null[e] {
			s.idx = append(s.idx, 0)
			nulls++
			continue
		}
		if e != prevEntry {
			val := v.value(e)
			if id < 0 || !bytes.Equal(val, prev) {
				var seen bool
				if id, seen = s.ids[string(val)]; !seen {
					id = int32(len(s.dictEnds) - 1)
					s.ids[string(val)] = id
					s.dict = append(s.dict, val...)
					s.dictEnds = append(s.dictEnds, int32(len(s.dict)))
				}
				prev = val
			}
			prevEntry = e
		}
		s.idx = append(s.idx, id)
	}
	dict := array.NewStringData(array.NewData(arrow.BinaryTypes.String, len(s.dictEnds)-1,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(s.dictEnds)), memory.NewBufferBytes(s.dict)}, nil, 0, 0))
	defer dict.Release()
	if err := enc.PutDictionary(dict); err != nil {
		return err
	}
	// The indices have a slot per row; a null row's slot must be null in
	// the array too, or the encoder writes an index for it.
	var valid *memory.Buffer
	if nulls > 0 {
		s.valid = append(s.valid[:0], make([]byte, bitutil.BytesForBits(int64(rows)))...)
		for i := range rows {
			if !c.null[v.ref(i)] {
				bitutil.SetBit(s.valid, i)
			}
		}
		valid = memory.NewBufferBytes(s.valid)
	}
	idx := array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(s.idx),
		[]*memory.Buffer{valid, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(s.idx))}, nil, nulls, 0))
	defer idx.Release()
	return cw.WriteDictIndices(idx, defs, nil)
}

// int64Column is an integer column in DELTA_BINARY_PACKED: ordinals and
// line numbers grow by small steps, which that encoding stores in a few
// bits, where a dictionary would hash every distinct value.
func int64Column[B any](name string, values func(b *B, first int64, s *scratch) []int64) column[B] {
	return column[B]{
		node: must(schema.NewPrimitiveNode(name, parquet.Repetitions.Required, parquet.Types.Int64, -1, -1)),
		props: []parquet.WriterProperty{
			parquet.WithDictionaryFor(name, false),
			parquet.WithEncodingFor(name, parquet.Encodings.DeltaBinaryPacked),
		},
		write: func(cw file.ColumnChunkWriter, b *B, first int64, s *scratch) error {
			_, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(values(b, first, s), nil, nil)
			return err
		},
	}
}

func int32Column[B any](name string, values func(*B) []int32) column[B] {
	return column[B]{
		node: must(schema.NewPrimitiveNode(name, parquet.Repetitions.Required, parquet.Types.Int32, -1, -1)),
		write: func(cw file.ColumnChunkWriter, b *B, _ int64, _ *scratch) error {
			_, err := cw.(*file.Int32ColumnChunkWriter).WriteBatch(values(b), nil, nil)
			return err
		},
	}
}

func boolColumn[B any](name string, values func(b *B, s *scratch) []bool) column[B] {
	return column[B]{
		node:  must(schema.NewPrimitiveNode(name, parquet.Repetitions.Required, parquet.Types.Boolean, -1, -1)),
		props: []parquet.WriterProperty{parquet.WithDictionaryFor(name, false)},
		write: func(cw file.ColumnChunkWriter, b *B, _ int64, s *scratch) error {
			_, err := cw.(*file.BooleanColumnChunkWriter).WriteBatch(values(b, s), nil, nil)
			return err
		},
	}
}

// boolGroup is a group of boolean columns read off one label set per row:
// column i is true where the row's set has bits[i]. A group of columns
// (classes, class-required, buckets, or any other set a worker computes per
// row) is one call here and one []classify.Set in the batch.
func boolGroup[B any](names []string, bits []classify.Set, sets func(*B) []classify.Set) []column[B] {
	var cols []column[B]
	for i, name := range names {
		bit := bits[i]
		cols = append(cols, boolColumn(name, func(b *B, s *scratch) []bool {
			s.bools = s.bools[:0]
			for _, set := range sets(b) {
				s.bools = append(s.bools, set&bit != 0)
			}
			return s.bools
		}))
	}
	return cols
}

// classBits are the five classes in spec order, bucketBits the two buckets.
var (
	classBits  = []classify.Set{classify.CredentialValue, classify.FilesystemPath, classify.CommandString, classify.MoneyAmount, classify.URLEndpoint}
	bucketBits = []classify.Set{classify.RawContentBlob, classify.AccountIdentity}
)

// columnName turns a label id into a column name: gg:url-endpoint → url_endpoint.
func columnName(id string) string {
	return strings.ReplaceAll(strings.TrimPrefix(id, "gg:"), "-", "_")
}

// labelColumns names the columns of a group of label bits, with suffix.
func labelColumns(bits []classify.Set, suffix string) []string {
	var names []string
	for _, b := range bits {
		names = append(names, columnName(classify.RuleOf(b).ID)+suffix)
	}
	return names
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// toolsColumns is the schema of tools.parquet: server_id, tool, ordinal,
// line, property_count, a boolean per class, per class-required, and the
// two buckets.
func toolsColumns() []column[ToolsBatch] {
	cols := []column[ToolsBatch]{
		stringColumn("server_id", true, func(b *ToolsBatch) (*StringColumn, []int32) { return &b.ServerID, b.serverRef }),
		stringColumn("tool", true, func(b *ToolsBatch) (*StringColumn, []int32) { return &b.Name, nil }),
		int64Column("ordinal", func(b *ToolsBatch, first int64, s *scratch) []int64 {
			s.ints = s.ints[:0]
			for i := range b.Len() {
				s.ints = append(s.ints, first+int64(i))
			}
			return s.ints
		}),
		int64Column("line", func(b *ToolsBatch, _ int64, _ *scratch) []int64 { return b.Line }),
		int32Column("property_count", func(b *ToolsBatch) []int32 { return b.Properties }),
	}
	cols = append(cols, boolGroup(labelColumns(classBits, ""), classBits, func(b *ToolsBatch) []classify.Set { return b.Labels })...)
	cols = append(cols, boolGroup(labelColumns(classBits, "_required"), classBits, func(b *ToolsBatch) []classify.Set { return b.Required })...)
	cols = append(cols, boolGroup(labelColumns(bucketBits, ""), bucketBits, func(b *ToolsBatch) []classify.Set { return b.Labels })...)
	// The non-normative sensitivity variants, in sensitivity.Variants order:
	// camel_case_<class>, word_split_<class>, deep_<class>, true where the
	// variant adds the class to the tool. The counts through required
	// properties are in report.json and classify --sensitivity only.
	for i, sets := range [...]func(*ToolsBatch) []classify.Set{
		func(b *ToolsBatch) []classify.Set { return b.CamelCase },
		func(b *ToolsBatch) []classify.Set { return b.WordSplit },
		func(b *ToolsBatch) []classify.Set { return b.Deep },
	} {
		var names []string
		for _, name := range labelColumns(classBits, "") {
			names = append(names, sensitivity.Variants[i]+"_"+name)
		}
		cols = append(cols, boolGroup(names, classBits, sets)...)
	}
	return cols
}

// propertiesColumns is the schema of properties.parquet: server_id, tool,
// tool_ordinal, property, where, required, then a boolean per class and per
// bucket, as tools.parquet has them (WHERE credential_value).
func propertiesColumns() []column[PropertiesBatch] {
	cols := []column[PropertiesBatch]{
		stringColumn("server_id", true, func(b *PropertiesBatch) (*StringColumn, []int32) { return &b.ServerID, b.toolRef }),
		stringColumn("tool", true, func(b *PropertiesBatch) (*StringColumn, []int32) { return &b.Tool, b.toolRef }),
		int64Column("tool_ordinal", func(b *PropertiesBatch, _ int64, _ *scratch) []int64 { return b.ToolOrdinal }),
		stringColumn("property", false, func(b *PropertiesBatch) (*StringColumn, []int32) { return &b.Name, nil }),
		stringColumn("where", false, func(b *PropertiesBatch) (*StringColumn, []int32) { return &b.Where, nil }),
		boolColumn("required", func(b *PropertiesBatch, _ *scratch) []bool { return b.Required }),
	}
	cols = append(cols, boolGroup(labelColumns(classBits, ""), classBits, func(b *PropertiesBatch) []classify.Set { return b.Labels })...)
	cols = append(cols, boolGroup(labelColumns(bucketBits, ""), bucketBits, func(b *PropertiesBatch) []classify.Set { return b.Labels })...)
	return cols
}

// table is one Parquet file whose current row group is buffered as a B.
type table[B any] struct {
	fw      *file.Writer
	cols    []column[B]
	buf     B
	written int64
	s       scratch
}

func newTable[B any](w io.Writer, cols []column[B]) (*table[B], error) {
	fields := make(schema.FieldList, len(cols))
	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(batchRows),
		parquet.WithCreatedBy("atlas-reproduce"),
	}
	for i, c := range cols {
		fields[i] = c.node
		props = append(props, c.props...)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return nil, err
	}
	fw, err := file.NewParquetWriterWithError(w, root, file.WithWriterProps(parquet.NewWriterProperties(props...)))
	if err != nil {
		return nil, err
	}
	return &table[B]{fw: fw, cols: cols}, nil
}

// flush writes the buffered rows as one row group, each column in one call.
func (t *table[B]) flush(rows int) error {
	if rows == 0 {
		return nil
	}
	rg, err := t.fw.AppendRowGroupChecked()
	if err != nil {
		return err
	}
	for _, c := range t.cols {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		if err := c.write(cw, &t.buf, t.written, &t.s); err != nil {
			return fmt.Errorf("column %s: %w", c.node.Name(), err)
		}
		if err := cw.Close(); err != nil {
			return err
		}
	}
	t.written += int64(rows)
	return rg.Close()
}

// ToolsWriter streams tools.parquet. It is not safe for concurrent use; it
// may run on a goroutine of its own, apart from the properties.
type ToolsWriter struct{ t *table[ToolsBatch] }

// NewToolsWriter starts tools.parquet on w.
func NewToolsWriter(w io.Writer) (*ToolsWriter, error) {
	t, err := newTable(w, toolsColumns())
	if err != nil {
		return nil, fmt.Errorf("tools.parquet: %w", err)
	}
	return &ToolsWriter{t}, nil
}

// Append appends the rows of b, which the caller may reuse on return.
func (w *ToolsWriter) Append(b *ToolsBatch) error {
	for from := 0; from < b.Len(); {
		to := min(b.Len(), from+batchRows-w.t.buf.Len())
		w.t.buf.appendRows(b, from, to)
		from = to
		if w.t.buf.Len() == batchRows {
			if err := w.t.flush(batchRows); err != nil {
				return fmt.Errorf("tools.parquet: %w", err)
			}
			w.t.buf.Reset()
		}
	}
	return nil
}

// Close writes the last row group and the footer.
func (w *ToolsWriter) Close() error {
	err := w.t.flush(w.t.buf.Len())
	if cerr := w.t.fw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("tools.parquet: %w", err)
	}
	return nil
}

// PropertiesWriter streams properties.parquet. It is not safe for
// concurrent use.
type PropertiesWriter struct{ t *table[PropertiesBatch] }

// NewPropertiesWriter starts properties.parquet on w.
func NewPropertiesWriter(w io.Writer) (*PropertiesWriter, error) {
	t, err := newTable(w, propertiesColumns())
	if err != nil {
		return nil, fmt.Errorf("properties.parquet: %w", err)
	}
	return &PropertiesWriter{t}, nil
}

// Append appends the rows of a chunk's batch b, whose tools are the
// chunk's tools batch and whose tool ordinals count from firstOrdinal; the
// caller may reuse both on return.
func (w *PropertiesWriter) Append(b *PropertiesBatch, tools *ToolsBatch, firstOrdinal int64) error {
	for from := 0; from < b.Len(); {
		to := min(b.Len(), from+batchRows-w.t.buf.Len())
		w.t.buf.appendRows(b, tools, from, to, firstOrdinal)
		from = to
		if w.t.buf.Len() == batchRows {
			if err := w.t.flush(batchRows); err != nil {
				return fmt.Errorf("properties.parquet: %w", err)
			}
			w.t.buf.Reset()
		}
	}
	return nil
}

// Close writes the last row group and the footer.
func (w *PropertiesWriter) Close() error {
	err := w.t.flush(w.t.buf.Len())
	if cerr := w.t.fw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("properties.parquet: %w", err)
	}
	return nil
}
