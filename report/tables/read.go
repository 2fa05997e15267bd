package tables

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// ToolRow is one tool as read back from a run's tools.parquet. Its byte
// slices alias the batch being read: valid until the callback returns.
type ToolRow struct {
	// Ordinal is the row's index in the file (its ordinal column).
	Ordinal int64
	// Server and Name are server_id and tool; HasServer and HasName are
	// false for a null.
	Server, Name       []byte
	HasServer, HasName bool
	// Definition is definition_sha256.
	Definition Hash
	// Labels and Required are the classes (normative only) of the class
	// columns and of the <class>_required columns.
	Labels, Required classify.Set
}

// ReadOptions choose what ReadTools reads.
type ReadOptions struct {
	// NamesOnly reads server_id and tool alone (Definition, Labels and
	// Required are left zero), for a second pass that only needs names.
	NamesOnly bool
	// NoLabels reads server_id, tool and definition_sha256 alone (Labels
	// and Required are left zero), for a pass that looks for definitions
	// by hash and needs no classes.
	NoLabels bool
	// Rows, when set, is told the file's row count before the first row,
	// so that the caller can size its memory once.
	Rows func(n int64)
}

// readBatch is how many rows ReadTools decodes at a time.
const readBatch = 32 * 1024

// ReadTools calls fn for every row of the tools.parquet at path, in
// order, decoding a batch of rows at a time: memory is one batch, whatever
// the file's size. A file that lacks a column it needs, or holds one of
// another type, is an error naming the file.
func ReadTools(ctx context.Context, path string, opt ReadOptions, fn func(*ToolRow) error) error {
	f, pf, err := openParquet(path)
	if err != nil {
		return err
	}
	defer closeParquet(f, pf)
	_, hint, err := checkedRows(path, f, pf)
	if err != nil {
		return err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatch}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// Rows is told the count as far as checkedRows trusts it, so that the
	// caller can size its memory once without a crafted footer sizing it.
	if opt.Rows != nil {
		opt.Rows(hint)
	}
	names := readColumns(opt.NamesOnly, opt.NoLabels)
	sc := pf.MetaData().Schema
	idx := make([]int, len(names))
	for i, n := range names {
		if idx[i] = sc.ColumnIndexByName(n); idx[i] < 0 {
			if n == definitionColumn {
				return fmt.Errorf("%s: no %s column: the run predates definition hashes; run it again to compare tool by tool", path, n)
			}
			return fmt.Errorf("%s: no %s column: not a tools.parquet of run", path, n)
		}
	}
	rr, err := fr.GetRecordReader(ctx, idx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rr.Release()
	var ordinal int64
	for {
		rec, err := rr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		cols, err := typedColumns(rec, names)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if ordinal, err = cols.rows(ordinal, int(rec.NumRows()), opt.NamesOnly, fn); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

// definitionColumn is the column of a tool's definition hash.
const definitionColumn = "definition_sha256"

// readColumns names the columns ReadTools reads, in the order typedColumns
// sorts them into: the two strings, the definition hash, then the class
// and class-required booleans in classBits order (unless noLabels).
func readColumns(namesOnly, noLabels bool) []string {
	names := []string{"server_id", "tool"}
	if namesOnly {
		return names
	}
	names = append(names, definitionColumn)
	if noLabels {
		return names
	}
	names = append(names, labelColumns(classBits, "")...)
	return append(names, labelColumns(classBits, "_required")...)
}

// batchCols are a record batch's columns, typed; def is the
// definition_sha256 column, whose type decodeHash judges.
type batchCols struct {
	strs  []*array.String
	bools []*array.Boolean
	def   arrow.Array
}

func typedColumns(rec arrow.RecordBatch, names []string) (batchCols, error) {
	var c batchCols
	for i, n := range names {
		if n == definitionColumn {
			c.def = rec.Column(i)
			continue
		}
		switch a := rec.Column(i).(type) {
		case *array.String:
			c.strs = append(c.strs, a)
		case *array.Boolean:
			c.bools = append(c.bools, a)
		default:
			return c, fmt.Errorf("column %s has type %s", n, a.DataType())
		}
	}
	return c, nil
}

// rows calls fn for the n rows of the batch, numbered from ordinal, and
// returns the ordinal after them.
func (c *batchCols) rows(ordinal int64, n int, namesOnly bool, fn func(*ToolRow) error) (int64, error) {
	var r ToolRow
	for i := range n {
		r = ToolRow{Ordinal: ordinal}
		ordinal++
		r.Server, r.HasServer = str(c.strs[0], i)
		r.Name, r.HasName = str(c.strs[1], i)
		if !namesOnly {
			if err := decodeHash(&r.Definition, c.def, i); err != nil {
				return ordinal, fmt.Errorf("row %d: %s: %w", r.Ordinal, definitionColumn, err)
			}
			// Without the class columns (NoLabels) there are no booleans.
			for j, b := range classBits[:len(c.bools)/2] {
				if c.bools[j].Value(i) {
					r.Labels |= b
				}
				if c.bools[len(classBits)+j].Value(i) {
					r.Required |= b
				}
			}
		}
		if err := fn(&r); err != nil {
			return ordinal, err
		}
	}
	return ordinal, nil
}

// decodeHash reads row i of a hash column into h: the 32 bytes of a
// FIXED_LEN_BYTE_ARRAY(32) column (hashColumn writes them), or 64 hex digits
// in a string column, as runs before the binary columns wrote them.
func decodeHash(h *Hash, a arrow.Array, i int) error {
	if a.IsNull(i) {
		return errors.New("null, not a SHA-256")
	}
	switch a := a.(type) {
	case *array.FixedSizeBinary:
		if v := a.Value(i); len(v) == len(h) {
			copy(h[:], v)
			return nil
		}
	case *array.String:
		if v, _ := str(a, i); len(v) == 2*len(h) {
			_, err := hex.Decode(h[:], v)
			return err
		}
	}
	return fmt.Errorf("%s value is not a SHA-256", a.DataType())
}

// str is row i of a string column, and false for a null.
func str(a *array.String, i int) ([]byte, bool) {
	if a.IsNull(i) {
		return nil, false
	}
	v := a.Value(i)
	// The bytes alias the batch's buffer, read-only; no copy per row.
	return unsafe.Slice(unsafe.StringData(v), len(v)), true
}

// openParquet opens path, which must be a regular file, as a Parquet
// file; a file that is not one is an error naming path. closeParquet
// closes both.
func openParquet(path string) (*os.File, *file.Reader, error) {
	f, err := openreg.Open(path)
	if err != nil {
		return nil, nil, err
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, pf, nil
}

// closeParquet closes what openParquet opened.
func closeParquet(f *os.File, pf *file.Reader) {
	pf.Close()
	f.Close()
}
