package tables

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// The writers hand arrow-go's column writers what they can take fastest:
// booleans as bitmaps, and memory that a recycler takes back between
// column chunks. The tests here hold each such path to the plain one it
// replaces, byte for byte: the same rows written through the column
// writers' ordinary entry points, on memory from the Go heap, must give
// the same file.

// plainColumns returns cols with every boolean column written the plain
// way: the row group's values as a []bool through WriteBatch. A table of
// them goes on memory.DefaultAllocator.
func plainColumns[B any](cols []column[B]) []column[B] {
	cols = slices.Clone(cols)
	for i, c := range cols {
		if c.bitmap == nil {
			continue
		}
		bitmap := c.bitmap
		cols[i].write = func(cw file.ColumnChunkWriter, b *B, _ int64, s *scratch) error {
			v, n := bitmap(b, s)
			values := make([]bool, n)
			for j := range values {
				values[j] = bitutil.BitIsSet(v, j)
			}
			_, err := cw.(*file.BooleanColumnChunkWriter).WriteBatch(values, nil, nil)
			return err
		}
	}
	return cols
}

// writers makes the tools and properties writers of one way of writing.
type writers struct {
	tools func(io.Writer) (*ToolsWriter, error)
	props func(io.Writer) (*PropertiesWriter, error)
}

var (
	fastWriters  = writers{func(w io.Writer) (*ToolsWriter, error) { return NewToolsWriter(w) }, func(w io.Writer) (*PropertiesWriter, error) { return NewPropertiesWriter(w) }}
	plainWriters = writers{
		func(w io.Writer) (*ToolsWriter, error) {
			t, err := newTableOn[ToolsBatch](memory.DefaultAllocator, "tools.parquet", w, toolsGroupRows, plainColumns(toolsColumns()))
			return &ToolsWriter{t}, err
		},
		func(w io.Writer) (*PropertiesWriter, error) {
			t, err := newTableOn[PropertiesBatch](memory.DefaultAllocator, "properties.parquet", w, batchRows, plainColumns(propertiesColumns()))
			return &PropertiesWriter{t}, err
		},
	}
)

// poisonWriters are the fast writers on a recycler that overwrites each
// buffer the column writers free: were one read after it is freed, the
// file would differ from the plain one.
var poisonWriters = writers{
	func(w io.Writer) (*ToolsWriter, error) {
		t, err := newTableOn[ToolsBatch](&recycler{out: map[*byte][]byte{}, poison: true}, "tools.parquet", w, toolsGroupRows, toolsColumns())
		return &ToolsWriter{t}, err
	},
	func(w io.Writer) (*PropertiesWriter, error) {
		t, err := newTableOn[PropertiesBatch](&recycler{out: map[*byte][]byte{}, poison: true}, "properties.parquet", w, batchRows, propertiesColumns())
		return &PropertiesWriter{t}, err
	},
}

// TestWritersMatchPlainPaths writes the same rows the fast way (also on
// poisoned memory) and the plain way and wants the same bytes, for the round-trip test's rows
// (nulls, invalid UTF-8, hashes that repeat only in the second row group)
// and for census-shaped rows (sparse labels, long runs), each in chunks of
// the runner's size and of one row.
func TestWritersMatchPlainPaths(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rows  *tableRows
		chunk int
	}{
		{"gen", genRows(rand.New(rand.NewPCG(11, 12)), 3*toolsGroupRows/2), 2000},
		{"gen one row at a time", genRows(rand.New(rand.NewPCG(13, 14)), 5000), 1},
		{"census", censusRows(rand.New(rand.NewPCG(15, 16)), 150_000), 2000},
		{"one row", genRows(rand.New(rand.NewPCG(17, 18)), 1), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunk := func() int { return tc.chunk }
			fastTools, fastProps := tc.rows.writeWith(t, fastWriters, chunk)
			plainTools, plainProps := tc.rows.writeWith(t, plainWriters, chunk)
			if !bytes.Equal(fastTools, plainTools) {
				t.Errorf("tools.parquet: %d bytes the fast way, %d the plain way, not the same", len(fastTools), len(plainTools))
			}
			if !bytes.Equal(fastProps, plainProps) {
				t.Errorf("properties.parquet: %d bytes the fast way, %d the plain way, not the same", len(fastProps), len(plainProps))
			}
			poisonTools, poisonProps := tc.rows.writeWith(t, poisonWriters, chunk)
			if !bytes.Equal(poisonTools, plainTools) || !bytes.Equal(poisonProps, plainProps) {
				t.Errorf("written on memory overwritten as it is freed, the files differ from the plain way's")
			}
		})
	}
}

// TestChangesMatchPlainPaths holds changes.parquet's boolean groups (and
// its nullable hashes) to the plain path, over rows of every kind.
func TestChangesMatchPlainPaths(t *testing.T) {
	write := func(newWriter func(io.Writer) (*ChangesWriter, error)) []byte {
		var buf bytes.Buffer
		w, err := newWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(21, 22))
		side := func() *ChangeSide {
			if rng.IntN(3) == 0 {
				return nil
			}
			return &ChangeSide{Ordinal: rng.Int64N(1e6), Definition: Hash{byte(rng.IntN(50))},
				Labels: classify.Set(rng.Uint32()) & classify.Classes, Required: classify.Set(rng.Uint32()) & classify.Classes}
		}
		for i := range batchRows + 1000 {
			server := []byte(fmt.Sprintf("srv-%d", i/40))
			if err := w.Add([]string{"added", "removed", "changed"}[rng.IntN(3)], server, []byte("t"), rng.IntN(20) != 0, true, int64(i%4), side(), side()); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	fast := write(func(w io.Writer) (*ChangesWriter, error) { return NewChangesWriter(w) })
	plain := write(func(w io.Writer) (*ChangesWriter, error) {
		t, err := newTableOn[ChangesBatch](memory.DefaultAllocator, "changes.parquet", w, batchRows, plainColumns(changesColumns()))
		return &ChangesWriter{t}, err
	})
	if !bytes.Equal(fast, plain) {
		t.Errorf("changes.parquet: %d bytes the fast way, %d the plain way, not the same", len(fast), len(plain))
	}
	poison := write(func(w io.Writer) (*ChangesWriter, error) {
		t, err := newTableOn[ChangesBatch](&recycler{out: map[*byte][]byte{}, poison: true}, "changes.parquet", w, batchRows, changesColumns())
		return &ChangesWriter{t}, err
	})
	if !bytes.Equal(poison, plain) {
		t.Error("changes.parquet written on memory overwritten as it is freed differs from the plain way's")
	}
}

// TestPackBitmaps holds the bitmap packers to the per-row tests they
// replace, for lengths around byte and word edges and every label.
func TestPackBitmaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	dst := []byte{0xff, 0xff, 0xff} // stale bytes a shorter bitmap must overwrite
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 1024, 1031} {
		sets := make([]classify.Set, n)
		bools := make([]bool, n)
		for i := range sets {
			sets[i] = classify.Set(rng.Uint32())
			bools[i] = rng.IntN(2) == 0
		}
		if n == 1000 { // all set, then none
			for i := range sets {
				sets[i], bools[i] = ^classify.Set(0), true
			}
		}
		dst = packBools(dst, bools)
		if len(dst) != (n+7)/8 {
			t.Fatalf("packBools of %d values: %d bytes", n, len(dst))
		}
		for i, b := range bools {
			if bitutil.BitIsSet(dst, i) != b {
				t.Fatalf("packBools of %d values: bit %d is %v, want %v", n, i, !b, b)
			}
		}
		if n%8 != 0 && dst[n/8]>>(n%8) != 0 {
			t.Errorf("packBools of %d values: bits past the end set: %#x", n, dst[n/8])
		}
		for k := range 16 {
			label := classify.Set(1) << k
			dst = packSets(dst, sets, label)
			if len(dst) != (n+7)/8 {
				t.Fatalf("packSets of %d sets: %d bytes", n, len(dst))
			}
			for i, s := range sets {
				if bitutil.BitIsSet(dst, i) != (s&label != 0) {
					t.Fatalf("packSets of %d sets, label %#x: bit %d is %v, set %#x", n, label, i, !(s&label != 0), s)
				}
			}
			if n%8 != 0 && dst[n/8]>>(n%8) != 0 {
				t.Errorf("packSets of %d sets, label %#x: bits past the end set: %#x", n, label, dst[n/8])
			}
		}
	}
}

// fullDisk accepts limit bytes, then fails every write as a full
// filesystem does.
type fullDisk struct{ limit int }

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.limit {
		n := d.limit
		d.limit = 0
		return n, &os.PathError{Op: "write", Path: "/out/.tmp-changes.parquet", Err: syscall.ENOSPC}
	}
	d.limit -= len(p)
	return len(p), nil
}

// TestFullDiskNamed: a full disk, met in a row group or at the close,
// reads "no space left on device (writing FILE)" and is still ENOSPC.
func TestFullDiskNamed(t *testing.T) {
	for _, limit := range []int{0, 4, 1 << 10, 64 << 10} {
		w, err := NewChangesWriter(&fullDisk{limit: limit})
		if err == nil {
			for i := range 3 * batchRows {
				if err = w.Add("added", []byte(fmt.Sprintf("server-%d", i)), []byte("tool"), true, true, 0, nil, &ChangeSide{Ordinal: int64(i)}); err != nil {
					break
				}
			}
			if err == nil {
				err = w.Close()
			}
		}
		if err == nil {
			t.Fatalf("limit %d: no error from a full disk", limit)
		}
		if want := "no space left on device (writing changes.parquet)"; err.Error() != want {
			t.Errorf("limit %d: %q, want %q", limit, err, want)
		}
		if strings.Contains(err.Error(), "unknown error type") {
			t.Errorf("limit %d: %q", limit, err)
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("limit %d: %v is not ENOSPC", limit, err)
		}
	}
}
