package ociroot

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/atlas-reproduce/atlas-reproduce/internal/ocitest"
)

// archive/tar writes no sparse entry, so the test writes the blocks of
// the three sparse formats the reader expands itself: GNU's old type 'S'
// with its map in the header, and PAX with GNU.sparse.* records (0.1,
// map in the records; 1.0, map at the start of the data).

// block is one 512-byte tar header: ustar, or GNU's old layout.
func block(name string, typ byte, size int64, gnu bool, fill func(b []byte)) []byte {
	b := make([]byte, 512)
	copy(b, name)
	copy(b[100:], "0000644\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], "00000000000\x00")
	b[156] = typ
	if gnu {
		copy(b[257:], "ustar  \x00")
	} else {
		copy(b[257:], "ustar\x0000")
	}
	if fill != nil {
		fill(b)
	}
	copy(b[148:], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// pad is data padded to whole blocks.
func pad(data []byte) []byte {
	return append(data, make([]byte, (512-len(data)%512)%512)...)
}

// paxRecords is an extended header's body: "LEN key=value\n" each.
func paxRecords(kv ...string) []byte {
	var out []byte
	for i := 0; i < len(kv); i += 2 {
		rec := " " + kv[i] + "=" + kv[i+1] + "\n"
		n := len(rec)
		for n != len(rec)+len(strconv.Itoa(n)) {
			n = len(rec) + len(strconv.Itoa(n))
		}
		out = append(out, strconv.Itoa(n)+rec...)
	}
	return out
}

// chunk is one data region of a sparse file.
type chunk struct{ off, n int64 }

// sparseEntry is the tar blocks of a sparse file name of logical size
// size holding data (0xAA) in chunks, everything else a hole.
func sparseEntry(format, name string, size int64, chunks []chunk) []byte {
	var data []byte
	for _, c := range chunks {
		data = append(data, bytes.Repeat([]byte{0xAA}, int(c.n))...)
	}
	var out []byte
	switch format {
	case "gnu-old":
		if len(chunks) > 4 {
			panic("the old GNU header holds four chunks")
		}
		out = append(out, block(name, 'S', int64(len(data)), true, func(b []byte) {
			for i, c := range chunks {
				copy(b[386+24*i:], fmt.Sprintf("%011o\x00", c.off))
				copy(b[386+24*i+12:], fmt.Sprintf("%011o\x00", c.n))
			}
			copy(b[483:], fmt.Sprintf("%011o\x00", size))
		})...)
		out = append(out, pad(data)...)
	case "pax-0.1":
		var m []byte
		for i, c := range chunks {
			if i > 0 {
				m = append(m, ',')
			}
			m = fmt.Appendf(m, "%d,%d", c.off, c.n)
		}
		rec := paxRecords("GNU.sparse.numblocks", strconv.Itoa(len(chunks)), "GNU.sparse.map", string(m),
			"GNU.sparse.size", strconv.FormatInt(size, 10), "GNU.sparse.name", name)
		out = append(out, block("PaxHeaders/"+name, 'x', int64(len(rec)), false, nil)...)
		out = append(out, pad(rec)...)
		out = append(out, block("GNUSparseFile.0/"+name, '0', int64(len(data)), false, nil)...)
		out = append(out, pad(data)...)
	case "pax-1.0":
		m := fmt.Appendf(nil, "%d\n", len(chunks))
		for _, c := range chunks {
			m = fmt.Appendf(m, "%d\n%d\n", c.off, c.n)
		}
		body := append(pad(m), data...)
		rec := paxRecords("GNU.sparse.major", "1", "GNU.sparse.minor", "0",
			"GNU.sparse.realsize", strconv.FormatInt(size, 10), "GNU.sparse.name", name)
		out = append(out, block("PaxHeaders/"+name, 'x', int64(len(rec)), false, nil)...)
		out = append(out, pad(rec)...)
		out = append(out, block("GNUSparseFile.0/"+name, '0', int64(len(body)), false, nil)...)
		out = append(out, pad(body)...)
	default:
		panic(format)
	}
	return out
}

// sparseLayer is a gzipped layer of tar blocks, ended as tar ends.
func sparseLayer(t *testing.T, entries ...[]byte) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, e := range entries {
		zw.Write(e)
	}
	zw.Write(make([]byte, 1024))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return static.NewLayer(buf.Bytes(), types.DockerLayer)
}

// diskBytes is what the files under dir take on disk: their allocated
// blocks, so that a file written with holes counts as what it holds.
func diskBytes(t *testing.T, dir string) (alloc, size int64) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		st, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		size += st.Size()
		alloc += st.Sys().(*syscall.Stat_t).Blocks * 512
		return nil
	})
	return alloc, size
}

// TestFlattenSparse: a sparse entry is written as what it reads, holes
// as zeros, and those bytes count against the bound as they are written:
// one that declares more than the bound is refused before a byte of it
// lands on disk, and entries that each fit but together do not stop at
// the bound. Each of the three sparse formats is tried.
func TestFlattenSparse(t *testing.T) {
	const bound = 16 << 20
	reg := ocitest.NewRegistry(t, "")
	// 4 MiB of data in four chunks of the 1.5 GiB the entry declares.
	huge := []chunk{{0, 1 << 20}, {512 << 20, 1 << 20}, {1024 << 20, 1 << 20}, {1536<<20 - 1<<20, 1 << 20}}
	for _, format := range []string{"gnu-old", "pax-0.1", "pax-1.0"} {
		for _, tc := range []struct {
			name    string
			entries [][]byte
			want    error
			size    int64 // bytes of the flattened files, when it fits
		}{
			{name: "declared-past-bound", entries: [][]byte{sparseEntry(format, "big", 1536<<20, huge)}, want: ErrTooBig},
			{name: "together-past-bound", want: ErrTooBig, entries: [][]byte{
				sparseEntry(format, "a", 10<<20, []chunk{{0, 4096}}), sparseEntry(format, "b", 10<<20, []chunk{{10<<20 - 4096, 4096}})}},
			{name: "fits", size: 6 << 20, entries: [][]byte{
				sparseEntry(format, "a", 3<<20, []chunk{{1 << 20, 4096}}), sparseEntry(format, "b", 3<<20, []chunk{{0, 512}, {3<<20 - 512, 512}})}},
		} {
			t.Run(format+"/"+tc.name, func(t *testing.T) {
				repo := "sparse/" + format + "-" + tc.name
				reg.Push(t, repo, "1", ocitest.Image(t, v1.Config{}, sparseLayer(t, tc.entries...)))
				dir, f, err := pull(t, reg.Host+"/"+repo+":1", Options{MaxBytes: bound})
				alloc, size := diskBytes(t, dir)
				if alloc > bound || size > bound {
					t.Errorf("%d bytes allocated, %d bytes of files on disk: over the bound of %d", alloc, size, bound)
				}
				if tc.want != nil {
					if !errors.Is(err, tc.want) {
						t.Fatalf("err = %v, want %v", err, tc.want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if size != tc.size || f.Bytes != tc.size {
					t.Errorf("files of %d bytes, %d counted; want %d", size, f.Bytes, tc.size)
				}
				// The data lands where the map puts it, the holes are zeros.
				b, err := os.ReadFile(filepath.Join(dir, "a"))
				if err != nil || len(b) != 3<<20 || b[1<<20] != 0xAA || b[1<<20+4095] != 0xAA || b[1<<20-1] != 0 || b[1<<20+4096] != 0 {
					t.Errorf("a: %d bytes (%v), data not where the map puts it", len(b), err)
				}
			})
		}
	}
}
