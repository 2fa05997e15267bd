package tooldiff

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
	"io"
	"os"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// row is one tool as the diff reads it from tools.parquet. Its byte slices
// alias the batch being read: valid until the callback returns.
type row struct {
	ordinal          int64
	server, name     []byte
	hasServer        bool
	hasName          bool
	def              tables.Hash
	labels, required classify.Set
}

// readBatch is how many rows the reader decodes at a time.
const readBatch = 32 * 1024

// readTools calls fn for every row of a run's tools.parquet, in order,
// reading a batch of rows at a time. With namesOnly, only server_id and
// tool are read (the hashes and labels are left zero).
func readTools(ctx context.Context, path string, namesOnly bool, fn func(*row) error) error {
	return readToolsSized(ctx, path, namesOnly, nil, fn)
}

// readToolsSized is readTools that first tells rows how many rows the
// file has, so that the caller can size its memory once.
func readToolsSized(ctx context.Context, path string, namesOnly bool, rows func(int64), fn func(*row) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: readBatch}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if rows != nil {
		rows(pf.NumRows())
	}
	names := []string{"server_id", "tool"}
	bits := tables.ClassBits()
	if !namesOnly {
		names = append(names, "definition_sha256")
		for _, b := range bits {
			names = append(names, tables.LabelColumn(b))
		}
		for _, b := range bits {
			names = append(names, tables.LabelColumn(b)+"_required")
		}
	}
	sc := pf.MetaData().Schema
	idx := make([]int, len(names))
	for i, n := range names {
		if idx[i] = sc.ColumnIndexByName(n); idx[i] < 0 {
			if n == "definition_sha256" {
				return fmt.Errorf("%s: no definition_sha256 column: the run predates definition hashes; run it again to compare tool by tool", path)
			}
			return fmt.Errorf("%s: no %s column: not a tools.parquet of run", path, n)
		}
	}
	rr, err := fr.GetRecordReader(ctx, idx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rr.Release()
	var r row
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
		cols, err := columns(rec, names)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for i := range int(rec.NumRows()) {
			r = row{ordinal: ordinal}
			ordinal++
			r.server, r.hasServer = str(cols.strs[0], i)
			r.name, r.hasName = str(cols.strs[1], i)
			if !namesOnly {
				if err := hashAt(cols.def, i, &r.def); err != nil {
					return fmt.Errorf("%s: row %d: definition_sha256: %w", path, r.ordinal, err)
				}
				for j, b := range bits {
					if cols.bools[j].Value(i) {
						r.labels |= b
					}
					if cols.bools[len(bits)+j].Value(i) {
						r.required |= b
					}
				}
			}
			if err := fn(&r); err != nil {
				return err
			}
		}
	}
}

// batchCols are a record batch's columns, typed; def is the
// definition_sha256 column.
type batchCols struct {
	strs  []*array.String
	bools []*array.Boolean
	def   arrow.Array
}

func columns(rec arrow.RecordBatch, names []string) (batchCols, error) {
	var c batchCols
	for i, n := range names {
		if n == "definition_sha256" {
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

// str is row i of a string column, and false for a null.
func str(a *array.String, i int) ([]byte, bool) {
	if a.IsNull(i) {
		return nil, false
	}
	v := a.Value(i)
	// The bytes alias the batch's buffer, read-only; no copy per row.
	return unsafe.Slice(unsafe.StringData(v), len(v)), true
}

// hashAt reads row i of a hash column into h: the 32 bytes of a
// FIXED_LEN_BYTE_ARRAY(32) column, or 64 hex digits in a string column,
// as runs before the binary columns wrote them.
func hashAt(a arrow.Array, i int, h *tables.Hash) error {
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
