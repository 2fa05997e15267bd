//go:build unix

package tooldiff

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// withNumRows rewrites the footer's num_rows (FileMetaData field 3) of a
// Parquet file: it finds the field by its header byte (0x16: field delta 1,
// type i64) followed by the current count and then the row_groups list
// header (0x19), and fixes the footer length.
func withNumRows(t *testing.T, data []byte, old, new int64) []byte {
	t.Helper()
	n := len(data)
	flen := int(binary.LittleEndian.Uint32(data[n-8 : n-4]))
	footer := data[n-8-flen : n-8]
	zz := func(v int64) []byte { return binary.AppendUvarint(nil, uint64((v<<1)^(v>>63))) }
	pat := append(append([]byte{0x16}, zz(old)...), 0x19)
	i := bytes.Index(footer, pat)
	if i < 0 || bytes.Contains(footer[i+1:], pat) {
		t.Fatalf("num_rows %d not found once in the footer", old)
	}
	nf := append(append(append(append([]byte{}, footer[:i+1]...), zz(new)...), 0x19), footer[i+len(pat):]...)
	out := append(append([]byte{}, data[:n-8-flen]...), nf...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(nf)))
	return append(out, "PAR1"...)
}

// TestCraftedRowCounts: a tools.parquet whose footer claims a negative
// count, or billions of rows its row groups do not hold, fails naming the
// file (it panicked in makeslice, or exhausted memory sizing the old run's
// entries); so does a FIFO in its place, without blocking in open(2).
func TestCraftedRowCounts(t *testing.T) {
	tools := []tool{{server: "s", name: "a", def: "1"}, {server: "s", name: "b", def: "2"}}
	good := writeRun(t, tools)
	data, err := os.ReadFile(filepath.Join(good, "tools.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	crafted := func(rows int64) string {
		dir := writeRun(t, tools)
		if err := os.WriteFile(filepath.Join(dir, "tools.parquet"), withNumRows(t, data, 2, rows), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "tools.parquet"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, want string
	}{
		{"untouched", crafted(2), ""},
		{"negative", crafted(-5), "claims -5 rows"},
		{"4e9", crafted(4e9), "claims 4000000000 rows"},
		{"1e12", crafted(1e12), "claims 1000000000000 rows"},
		{"fifo", fifoDir, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compare(context.Background(), tc.old, good, Options{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Compare: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Join(tc.old, "tools.parquet"))):
				t.Fatalf("err = %v, want one naming %s and saying %q", err, filepath.Join(tc.old, "tools.parquet"), tc.want)
			}
		})
	}
}
