package tables

import (
	"bytes"
	"slices"
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
)

// The Parquet tables are written with the Parquet column writers directly,
// from batches held column by column: a worker fills a batch for its chunk
// (where the work is parallel), and the writer only copies it into the
// current row group and encodes each column of a full row group in one
// call. No Arrow arrays are built on the way. This file holds the column
// layer: how a column's values are held and how a row group of them is
// handed to its column writer.

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

// Value returns row i's bytes (as stored: invalid UTF-8 replaced) and
// whether it is not null.
func (c *StringColumn) Value(i int) ([]byte, bool) {
	return c.data[c.start(i):c.ends[i]], !c.null[i]
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

// grow makes room for n more rows (their offsets and null flags; the
// bytes grow as they come).
func (c *StringColumn) grow(n int) {
	c.ends, c.null = slices.Grow(c.ends, n), slices.Grow(c.null, n)
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

// column is one Parquet column of a table whose row groups are buffered as
// a B: its schema node, its encoding, and how a row group's values are
// handed to the column writer (first is the file's row number of the row
// group's first row).
type column[B any] struct {
	node  schema.Node
	props []parquet.WriterProperty
	write func(cw file.ColumnChunkWriter, b *B, first int64, s *scratch) error
	// bitmap, for a boolean column, is what write hands the writer: the
	// row group's values as a bitmap and the number of rows.
	bitmap func(b *B, s *scratch) ([]byte, int)
}

// scratch is the memory the column writes reuse from one row group to the
// next.
type scratch struct {
	dict   strDict
	idx    []int32
	valid  []byte
	values []parquet.ByteArray
	defs   []int16
	bits   []byte
	ints   []int64
	fixed  []parquet.FixedLenByteArray
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
					s.defs = append(s.defs, int16(b2u(!c.null[v.ref(i)])))
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
// once per row group (dictionaryIndices), and the writer receives the
// dictionary and the indices.
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
	nulls := dictionaryIndices(v, &s.dict, &s.idx)
	dict := array.NewStringData(array.NewData(arrow.BinaryTypes.String, s.dict.len(),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(s.dict.ends)), memory.NewBufferBytes(s.dict.dict)}, nil, 0, 0))
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

// dictionaryIndices numbers the distinct values of rows v in d, in the
// order they first come, and sets idx to each row's value id (0 for a
// null row). A value is looked up only where it differs from the previous
// row's: server ids and tool names come in long runs. It returns the
// number of null rows.
func dictionaryIndices(v stringRows, d *strDict, idx *[]int32) (nulls int) {
	c := v.c
	d.reset()
	*idx = (*idx)[:0]
	var prev []byte
	id, prevEntry := int32(-1), -1
	for i := range v.len() {
		e := v.ref(i)
		if c.null[e] {
			*idx = append(*idx, 0)
			nulls++
			continue
		}
		if e != prevEntry {
			val := v.value(e)
			if id < 0 || !bytes.Equal(val, prev) {
				id = d.id(val)
				prev = val
			}
			prevEntry = e
		}
		*idx = append(*idx, id)
	}
	return nulls
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

// countColumn is a plain integer column, optional when nullable: values
// gives the row group's non-null values and, for an optional column, each
// row's definition level (1 present, 0 null).
func countColumn[B any](name string, nullable bool, values func(b *B, s *scratch) ([]int64, []int16)) column[B] {
	rep := parquet.Repetitions.Required
	if nullable {
		rep = parquet.Repetitions.Optional
	}
	return column[B]{
		node: must(schema.NewPrimitiveNode(name, rep, parquet.Types.Int64, -1, -1)),
		write: func(cw file.ColumnChunkWriter, b *B, _ int64, s *scratch) error {
			v, defs := values(b, s)
			_, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(v, defs, nil)
			return err
		},
	}
}

func float64Column[B any](name string, values func(*B) []float64) column[B] {
	return column[B]{
		node: must(schema.NewPrimitiveNode(name, parquet.Repetitions.Required, parquet.Types.Double, -1, -1)),
		write: func(cw file.ColumnChunkWriter, b *B, _ int64, _ *scratch) error {
			_, err := cw.(*file.Float64ColumnChunkWriter).WriteBatch(values(b), nil, nil)
			return err
		},
	}
}

// hashColumn is a SHA-256 column: FIXED_LEN_BYTE_ARRAY(32), the digest's
// bytes, half the size of its hex and nothing to convert on the way in
// (DuckDB reads it as a BLOB: lower(hex(definition_sha256)) prints it as
// sha256sum does). Where definitions repeat (one definition served by many
// servers) a row group's distinct hashes go in a dictionary; where they do
// not, the column writer's cost check (dictionary and indices against the
// plain bytes, uncompressed pages only) drops the dictionary after the
// first batch, so a census of distinct definitions pays little for it. The
// pages are not compressed: random bytes do not compress, and the cost
// check needs uncompressed pages. No statistics. get returns the row
// group's hashes and, for a nullable column, which rows have one.
func hashColumn[B any](name string, nullable bool, get func(*B) ([]Hash, []bool)) column[B] {
	rep := parquet.Repetitions.Required
	if nullable {
		rep = parquet.Repetitions.Optional
	}
	return column[B]{
		node: must(schema.NewPrimitiveNode(name, rep, parquet.Types.FixedLenByteArray, -1, int32(len(Hash{})))),
		props: []parquet.WriterProperty{
			parquet.WithStatsFor(name, false),
			parquet.WithDictionaryFor(name, true),
			parquet.WithCompressionFor(name, compress.Codecs.Uncompressed),
		},
		write: func(cw file.ColumnChunkWriter, b *B, _ int64, s *scratch) error {
			hashes, ok := get(b)
			s.fixed, s.defs = slices.Grow(s.fixed[:0], len(hashes)), slices.Grow(s.defs[:0], len(hashes))
			for i := range hashes {
				if nullable && !ok[i] {
					s.defs = append(s.defs, 0)
					continue
				}
				s.fixed = append(s.fixed, hashes[i][:])
				s.defs = append(s.defs, 1)
			}
			var defs []int16
			if nullable {
				defs = s.defs
			}
			_, err := cw.(*file.FixedLenByteArrayColumnChunkWriter).WriteBatch(s.fixed, defs, nil)
			return err
		},
	}
}
