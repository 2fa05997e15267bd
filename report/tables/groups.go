package tables

import (
	"slices"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// A writer's row group holds a string column already dictionary-encoded:
// each value is numbered as its row is copied in from a worker's batch,
// so the bytes of a repeated value are not copied into the row group, and
// the row group's column is not walked again before it is written.

// dictColumn is a row group's string column as it is written: its
// distinct values, in the order they first come, and each row's value id
// (0 for a null row).
type dictColumn struct {
	d     strDict
	idx   []int32
	null  []bool
	nulls int
	// last is the id of the last non-null value appended, -1 for none: a
	// run of rows with one value is looked up once.
	last int32
}

// reset empties the column, keeping its memory.
func (c *dictColumn) reset() {
	if c.d.slots != nil {
		c.d.reset()
	}
	c.idx, c.null, c.nulls, c.last = c.idx[:0], c.null[:0], 0, -1
}

// append appends a row of value v, or a null when ok is false.
func (c *dictColumn) append(v []byte, ok bool) {
	if !ok {
		c.idx, c.null = append(c.idx, 0), append(c.null, true)
		c.nulls++
		return
	}
	if c.d.slots == nil {
		c.d.reset()
		c.last = -1
	}
	if c.last < 0 || string(c.d.value(c.last)) != string(v) {
		c.last = c.d.id(v)
	}
	c.idx, c.null = append(c.idx, c.last), append(c.null, false)
}

// repeat appends n rows with the value of the last row.
func (c *dictColumn) repeat(n int) {
	id, null := c.idx[len(c.idx)-1], c.null[len(c.null)-1]
	for range n {
		c.idx, c.null = append(c.idx, id), append(c.null, null)
	}
	if null {
		c.nulls += n
	}
}

// appendRows appends rows [from, to) of src.
func (c *dictColumn) appendRows(src *StringColumn, from, to int) {
	for i := from; i < to; i++ {
		c.append(src.Value(i))
	}
}

// grow makes room for n more rows.
func (c *dictColumn) grow(n int) {
	c.idx, c.null = slices.Grow(c.idx, n), slices.Grow(c.null, n)
}

// dictStringColumn is a string column of a row group that holds it as a
// dictColumn; otherwise as stringColumn.
func dictStringColumn[B any](name string, nullable bool, get func(*B) *dictColumn) column[B] {
	rep := parquet.Repetitions.Required
	if nullable {
		rep = parquet.Repetitions.Optional
	}
	return column[B]{
		node:  must(schema.NewPrimitiveNodeLogical(name, rep, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)),
		props: []parquet.WriterProperty{parquet.WithStatsFor(name, false)},
		write: func(cw file.ColumnChunkWriter, b *B, _ int64, s *scratch) error {
			c := get(b)
			var defs []int16
			if nullable {
				s.defs = slices.Grow(s.defs[:0], len(c.null))
				for _, null := range c.null {
					s.defs = append(s.defs, int16(boolInt(!null)))
				}
				defs = s.defs
			}
			w := cw.(*file.ByteArrayColumnChunkWriter)
			if !dictionaryOn(w) {
				// Dictionary encoding is off for this column: plain values.
				s.values = s.values[:0]
				for i, id := range c.idx {
					if !c.null[i] {
						s.values = append(s.values, c.d.value(id))
					}
				}
				_, err := w.WriteBatch(s.values, defs, nil)
				return err
			}
			return writeDictionary(w, &c.d, c.idx, c.nulls, func(i int) bool { return c.null[i] }, defs, s)
		},
	}
}

// propertiesGroup is properties.parquet's row group: a run of
// PropertiesBatch rows, with the tool ordinals counted from the file's
// first tool and the strings held as dictColumns.
type propertiesGroup struct {
	ServerID, Tool, Name, Where dictColumn
	ToolOrdinal                 []int64
	Required                    []bool
	Labels                      []classify.Set
}

// Len is the number of rows.
func (g *propertiesGroup) Len() int { return len(g.Required) }

// Reset empties the row group, keeping its memory.
func (g *propertiesGroup) Reset() {
	for _, c := range []*dictColumn{&g.ServerID, &g.Tool, &g.Name, &g.Where} {
		c.reset()
	}
	g.ToolOrdinal, g.Required, g.Labels = g.ToolOrdinal[:0], g.Required[:0], g.Labels[:0]
}

// grow makes room for n more rows.
func (g *propertiesGroup) grow(n int) {
	for _, c := range []*dictColumn{&g.ServerID, &g.Tool, &g.Name, &g.Where} {
		c.grow(n)
	}
	g.ToolOrdinal, g.Required, g.Labels = slices.Grow(g.ToolOrdinal, n), slices.Grow(g.Required, n), slices.Grow(g.Labels, n)
}

// appendRows appends rows [from, to) of a chunk's batch src, taking the
// server id and tool name of each row's tool from the chunk's tools, once
// per run of rows of one tool.
func (g *propertiesGroup) appendRows(src *PropertiesBatch, tools *ToolsBatch, from, to int, firstOrdinal int64) {
	for i := from; i < to; {
		o := src.ToolOrdinal[i]
		run := 1
		for i+run < to && src.ToolOrdinal[i+run] == o {
			run++
		}
		g.ServerID.append(tools.ServerIDOf(int(o)))
		g.Tool.append(tools.Name.Value(int(o)))
		g.ServerID.repeat(run - 1)
		g.Tool.repeat(run - 1)
		for range run {
			g.ToolOrdinal = append(g.ToolOrdinal, firstOrdinal+o)
		}
		i += run
	}
	g.Name.appendRows(&src.Name, from, to)
	g.Where.appendRows(&src.Where, from, to)
	g.Required = append(g.Required, src.Required[from:to]...)
	g.Labels = append(g.Labels, src.Labels[from:to]...)
}
