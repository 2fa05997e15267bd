package tables

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// A boolean column is handed to its column writer as a bitmap, the form
// PLAIN stores it in: the writer's []bool path packs the values again and
// takes their minimum and maximum one comparison per value, where its
// bitmap path copies words and stops at the first true and false. The
// pages, statistics and footers are the same bytes either way.

// bitmapColumn is a boolean column; bitmap returns a row group's values,
// row i at bit i%8 of byte i/8, and the number of rows.
func bitmapColumn[B any](name string, bitmap func(b *B, s *scratch) ([]byte, int)) column[B] {
	return column[B]{
		node:   must(schema.NewPrimitiveNode(name, parquet.Repetitions.Required, parquet.Types.Boolean, -1, -1)),
		props:  []parquet.WriterProperty{parquet.WithDictionaryFor(name, false)},
		bitmap: bitmap,
		write: func(cw file.ColumnChunkWriter, b *B, _ int64, s *scratch) error {
			v, n := bitmap(b, s)
			_, err := cw.(*file.BooleanColumnChunkWriter).WriteBitmapBatch(v, 0, n, nil, nil)
			return err
		},
	}
}

// boolColumn is a boolean column whose batch holds a []bool.
func boolColumn[B any](name string, values func(b *B, s *scratch) []bool) column[B] {
	return bitmapColumn(name, func(b *B, s *scratch) ([]byte, int) {
		v := values(b, s)
		s.bits = packBools(s.bits, v)
		return s.bits, len(v)
	})
}

// boolGroup is a group of boolean columns read off one label set per row:
// column i is true where the row's set has bits[i], a single label. A
// group of columns (classes, class-required, buckets, or any other set a
// worker computes per row) is one call here and one []classify.Set in the
// batch.
func boolGroup[B any](names []string, labels []classify.Set, sets func(*B) []classify.Set) []column[B] {
	var cols []column[B]
	for i, name := range names {
		label := labels[i]
		if bits.OnesCount16(uint16(label)) != 1 {
			panic(fmt.Sprintf("column %s: %#x is not one label", name, label)) // the schemas are fixed: a bug
		}
		cols = append(cols, bitmapColumn(name, func(b *B, s *scratch) ([]byte, int) {
			v := sets(b)
			s.bits = packSets(s.bits, v, label)
			return s.bits, len(v)
		}))
	}
	return cols
}

// packBools packs v into dst's memory as a bitmap: bit i of the result is
// v[i].
func packBools(dst []byte, v []bool) []byte {
	dst = sized(dst, len(v))
	i := 0
	for ; i+8 <= len(v); i += 8 {
		w := v[i : i+8 : i+8]
		dst[i>>3] = b2u(w[0]) | b2u(w[1])<<1 | b2u(w[2])<<2 | b2u(w[3])<<3 |
			b2u(w[4])<<4 | b2u(w[5])<<5 | b2u(w[6])<<6 | b2u(w[7])<<7
	}
	if i < len(v) {
		var last byte
		for j, x := range v[i:] {
			last |= b2u(x) << j
		}
		dst[i>>3] = last
	}
	return dst
}

// packSets packs the label of each set in v into dst's memory as a
// bitmap: bit i of the result is set where v[i] has label, which is one
// bit.
func packSets(dst []byte, v []classify.Set, label classify.Set) []byte {
	dst = sized(dst, len(v))
	k := uint(bits.TrailingZeros16(uint16(label)))
	i := 0
	for ; i+8 <= len(v); i += 8 {
		w := v[i : i+8 : i+8]
		dst[i>>3] = byte(w[0]>>k&1) | byte(w[1]>>k&1)<<1 | byte(w[2]>>k&1)<<2 | byte(w[3]>>k&1)<<3 |
			byte(w[4]>>k&1)<<4 | byte(w[5]>>k&1)<<5 | byte(w[6]>>k&1)<<6 | byte(w[7]>>k&1)<<7
	}
	if i < len(v) {
		var last byte
		for j, x := range v[i:] {
			last |= byte(x>>k&1) << j
		}
		dst[i>>3] = last
	}
	return dst
}

// sized returns dst's memory resized to the bytes of an n-bit bitmap,
// growing it if it must (every byte is then written by the caller).
func sized(dst []byte, n int) []byte {
	m := (n + 7) / 8
	return slices.Grow(dst[:0], m)[:m]
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}
