// Package tables holds the run's Parquet tables: their schemas, the column
// batches the run fills, the writers and the readers. It is the only
// package that imports arrow-go, so that nothing else links it.
package tables

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// batchRows is the number of rows of a row group of every table: row groups
// follow row counts only, so files are identical for any worker count.
const batchRows = 32 * 1024

// toolsGroupRows is the row group length of tools.parquet. Its two hash
// columns take a dictionary where definitions repeat, and each row group
// writes its dictionary again: on a census of 4,768 distinct definitions in
// 229,539 tools, 32k-row groups spent about 2 MB of a 4.3 MB file on
// dictionaries. A tools row is about 130 bytes in its batch, so the longer
// group costs some 12 MB of buffer more than a 32k one.
const toolsGroupRows = 64 * 1024

// rowGroup is what a table buffers its current row group in: a batch type
// that knows its length and can be emptied.
type rowGroup[B any] interface {
	*B
	Len() int
	Reset()
}

// grower is a row group batch that can make room for n rows at once.
type grower interface{ grow(n int) }

// table is one Parquet file written row group by row group, every column
// of a full row group in one call. Every table of the project goes through
// it: the schema is a list of columns over the row group's batch type B.
// It is not safe for concurrent use; each table may run on a goroutine of
// its own.
type table[B any, PB rowGroup[B]] struct {
	name    string
	fw      *file.Writer
	cols    []column[B]
	buf     B
	written int64
	s       scratch
	// groupRows is the length of a full row group.
	groupRows int
}

// newTable starts the file name (for errors) on w with the columns cols
// and, beside the version and rules every table carries, the key-value
// metadata meta.
func newTable[B any, PB rowGroup[B]](name string, w io.Writer, groupRows int, cols []column[B], meta ...KV) (*table[B, PB], error) {
	return newTableOn[B, PB](newRecycler(), name, w, groupRows, cols, meta...)
}

// newTableOn is newTable with the column writers' memory taken from mem.
func newTableOn[B any, PB rowGroup[B]](mem memory.Allocator, name string, w io.Writer, groupRows int, cols []column[B], meta ...KV) (*table[B, PB], error) {
	fields := make(schema.FieldList, len(cols))
	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(int64(groupRows)),
		parquet.WithCreatedBy(createdBy()),
		parquet.WithAllocator(mem),
	}
	// A hash column's dictionary that outgrows the page size limit falls
	// back to plain pages mid-chunk, and arrow-go then lists the chunk's
	// two data page encodings in map order: the footer would differ from
	// run to run. Room for every row group's hashes keeps the fallback to
	// the cost check, which acts before any page is written.
	props = append(props, parquet.WithDictionaryPageSizeLimit(max(1<<20, 2*int64(groupRows)*int64(len(Hash{})))))
	kv, err := fileMetadata(meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i, c := range cols {
		fields[i] = c.node
		props = append(props, c.props...)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fw, err := file.NewParquetWriterWithError(w, root, file.WithWriterProps(parquet.NewWriterProperties(props...)), file.WithWriteMetadata(kv))
	if err != nil {
		return nil, writeError(name, err)
	}
	return &table[B, PB]{name: name, fw: fw, cols: cols, groupRows: groupRows}, nil
}

// append buffers n rows, copied by copyRows(buf, from, to) for each slice
// [from, to) of them that fits in the current row group, and writes every
// row group it fills.
func (t *table[B, PB]) append(n int, copyRows func(buf *B, from, to int)) error {
	buf := PB(&t.buf)
	if g, ok := any(buf).(grower); ok && t.written == 0 && buf.Len() == 0 && n > 0 {
		// The first rows: room for a whole row group at once, rather
		// than doubling each column up to it. Row groups after the
		// first reuse the room.
		g.grow(t.groupRows)
	}
	for from := 0; from < n; {
		to := min(n, from+t.groupRows-buf.Len())
		copyRows(&t.buf, from, to)
		from = to
		if buf.Len() == t.groupRows {
			if err := t.flush(t.groupRows); err != nil {
				return writeError(t.name, err)
			}
			buf.Reset()
		}
	}
	return nil
}

// Close writes the last row group and the footer.
func (t *table[B, PB]) Close() error {
	err := t.flush(PB(&t.buf).Len())
	if cerr := t.fw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return writeError(t.name, err)
	}
	return nil
}

// flush writes the buffered rows as one row group, each column in one call.
func (t *table[B, PB]) flush(rows int) error {
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

// ToolsWriter streams tools.parquet.
type ToolsWriter struct {
	*table[ToolsBatch, *ToolsBatch]
}

// NewToolsWriter starts tools.parquet on w, with meta (Source) beside the
// version and rules in its footer.
func NewToolsWriter(w io.Writer, meta ...KV) (*ToolsWriter, error) {
	t, err := newTable[ToolsBatch]("tools.parquet", w, toolsGroupRows, toolsColumns(), meta...)
	if err != nil {
		return nil, err
	}
	return &ToolsWriter{t}, nil
}

// Append appends the rows of b, which the caller may reuse on return.
func (w *ToolsWriter) Append(b *ToolsBatch) error {
	return w.append(b.Len(), func(buf *ToolsBatch, from, to int) { buf.appendRows(b, from, to) })
}

// PropertiesWriter streams properties.parquet.
type PropertiesWriter struct {
	*table[PropertiesBatch, *PropertiesBatch]
}

// NewPropertiesWriter starts properties.parquet on w, with meta as
// NewToolsWriter.
func NewPropertiesWriter(w io.Writer, meta ...KV) (*PropertiesWriter, error) {
	t, err := newTable[PropertiesBatch]("properties.parquet", w, batchRows, propertiesColumns(), meta...)
	if err != nil {
		return nil, err
	}
	return &PropertiesWriter{t}, nil
}

// Append appends the rows of a chunk's batch b, whose tools are the
// chunk's tools batch and whose tool ordinals count from firstOrdinal; the
// caller may reuse both on return.
func (w *PropertiesWriter) Append(b *PropertiesBatch, tools *ToolsBatch, firstOrdinal int64) error {
	return w.append(b.Len(), func(buf *PropertiesBatch, from, to int) { buf.appendRows(b, tools, from, to, firstOrdinal) })
}

// appendRow appends one row, filled in place by fill, and writes the row
// group when it is full.
func (t *table[B, PB]) appendRow(fill func(buf *B)) error {
	fill(&t.buf)
	if PB(&t.buf).Len() == t.groupRows {
		if err := t.flush(t.groupRows); err != nil {
			return writeError(t.name, err)
		}
		PB(&t.buf).Reset()
	}
	return nil
}

// ChangesWriter streams changes.parquet, the tool-level changes between two
// runs.
type ChangesWriter struct {
	*table[ChangesBatch, *ChangesBatch]
}

// NewChangesWriter starts changes.parquet on w, with meta as
// NewToolsWriter.
func NewChangesWriter(w io.Writer, meta ...KV) (*ChangesWriter, error) {
	t, err := newTable[ChangesBatch]("changes.parquet", w, batchRows, changesColumns(), meta...)
	if err != nil {
		return nil, err
	}
	return &ChangesWriter{t}, nil
}

// ChangeSide is one side of a changed tool: its ordinal in the run's
// tools.parquet, its definition hash and its labels. A nil side is the
// side without the tool.
type ChangeSide struct {
	Ordinal          int64
	Definition       Hash
	Labels, Required classify.Set
}

// Add appends one tool: change is "added", "removed" or "changed"; server
// and tool are nil for a null.
func (w *ChangesWriter) Add(change string, server, tool []byte, hasServer, hasTool bool, nameOrdinal int64, old, new *ChangeSide) error {
	return w.appendRow(func(b *ChangesBatch) {
		b.Change.Append([]byte(change))
		b.ServerID.AppendNullable(server, hasServer)
		b.Tool.AppendNullable(tool, hasTool)
		b.NameOrdinal = append(b.NameOrdinal, nameOrdinal)
		for _, s := range []struct {
			side *ChangeSide
			ord  *optInt64s
			def  *[]Hash
			has  *[]bool
			l, r *[]classify.Set
		}{{old, &b.OldOrdinal, &b.OldDef, &b.HasOld, &b.Old, &b.OldReq}, {new, &b.NewOrdinal, &b.NewDef, &b.HasNew, &b.New, &b.NewReq}} {
			v := ChangeSide{}
			if s.side != nil {
				v = *s.side
				s.ord.append(&v.Ordinal)
			} else {
				s.ord.append(nil)
			}
			*s.def = append(*s.def, v.Definition)
			*s.has = append(*s.has, s.side != nil)
			*s.l = append(*s.l, v.Labels)
			*s.r = append(*s.r, v.Required)
		}
	})
}

// spaceError is a write that ran out of room. arrow-go recovers a write
// error inside a column writer as "unknown error type: ...", which says
// nothing to a user; this names the one cause and the file.
type spaceError struct {
	name string
	err  error
}

func (e *spaceError) Error() string { return "no space left on device (writing " + e.name + ")" }
func (e *spaceError) Unwrap() error { return e.err }

// writeError names the table's file in err, and says a full disk in
// those words whatever layer of arrow-go it came up through.
func writeError(name string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
		return &spaceError{name, err}
	}
	return fmt.Errorf("%s: %w", name, err)
}
