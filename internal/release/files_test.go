package release_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// TestSumsRoundTrip: what AppendSums writes, hashverify reads back to the
// same manifest; a name it could not carry back is refused, not written.
func TestSumsRoundTrip(t *testing.T) {
	h := func(s string) string { b := sha256.Sum256([]byte(s)); return hex.EncodeToString(b[:]) }
	for _, tc := range []struct {
		name  string
		sums  map[string]string
		wrong string // part of the error; "" when the round trip must hold
	}{
		{"release", map[string]string{release.ToolsFile: h("a"), release.ServersFile: h("b"), release.CandidatesFile: h("c"), release.File: h("d")}, ""},
		{"spaces and unicode", map[string]string{" lead": h("a"), "two  spaces ": h("b"), "naïve #1.gz": h("c")}, ""},
		{"newline", map[string]string{"a\nb": h("a")}, "cannot be written"},
		{"carriage return", map[string]string{"a\r": h("a")}, "cannot be written"},
		{"backslash", map[string]string{`a\b`: h("a")}, "cannot be written"},
		{"slash", map[string]string{"dir/a": h("a")}, "cannot be written"},
		{"star", map[string]string{"*a": h("a")}, "cannot be written"},
		{"empty", map[string]string{"": h("a")}, "cannot be listed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := release.AppendSums(nil, tc.sums)
			if tc.wrong != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wrong) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wrong)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := hashverify.ParseSHA256Sums(bytes.NewReader(b), release.SumsFile)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(map[string]string(m), tc.sums) {
				t.Errorf("read back %q, wrote %q:\n%s", m, tc.sums, b)
			}
		})
	}
}

// TestSumsSorted: the manifest lists names in byte order, as sha256sum
// of a sorted glob does, so that equal sums give equal bytes.
func TestSumsSorted(t *testing.T) {
	sum := strings.Repeat("0", 64)
	b, err := release.AppendSums(nil, map[string]string{"b": sum, "a": sum, "B": sum})
	if err != nil {
		t.Fatal(err)
	}
	if want := sum + "  B\n" + sum + "  a\n" + sum + "  b\n"; string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
}

// TestWriter: the hash Finish returns is that of the bytes on disk, and a
// gzip file reads back as what was written, for every compression.
func TestWriter(t *testing.T) {
	body := strings.Repeat(`{"server_id": "s", "tools": []}`+"\n", 5000)
	for _, tc := range []struct {
		name string
		c    release.Compression
	}{
		{"plain", release.Compression{}},
		{"gzip", release.Compression{Gzip: true}},
		{"parallel gzip", release.Compression{Gzip: true, Parallel: 2, Block: 64 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			set, err := outset.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer set.Close()
			w, err := release.Create(set, "f", tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(w, body); err != nil {
				t.Fatal(err)
			}
			got, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if err := release.WriteSums(set, map[string]string{w.Name(): got}); err != nil {
				t.Fatal(err)
			}
			if err := set.Commit(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "f"))
			if err != nil {
				t.Fatal(err)
			}
			if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != got {
				t.Errorf("Finish says %s, the file hashes to %x", got, h)
			}
			m, err := hashverify.ReadSHA256Sums(filepath.Join(dir, release.SumsFile))
			if err != nil || m["f"] != got {
				t.Errorf("manifest %v, %v; want f: %s", m, err, got)
			}
			if tc.c.Gzip {
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				if b, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if string(b) != body {
				t.Errorf("the file holds %d bytes, %d were written", len(b), len(body))
			}
		})
	}
}

// TestCreateSnapshot: the three files in the snapshot's order, the two
// .gz ones compressed and the candidates not.
func TestCreateSnapshot(t *testing.T) {
	dir := t.TempDir()
	set, err := outset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	ws, err := release.CreateSnapshot(set, release.Compression{Gzip: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{release.ToolsFile, release.ServersFile, release.CandidatesFile}
	for i, w := range ws {
		if w.Name() != want[i] {
			t.Errorf("file %d is %s, want %s", i, w.Name(), want[i])
		}
		io.WriteString(w, "{}\n")
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	if err := set.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, name := range want {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		gzipped := bytes.HasPrefix(b, []byte{0x1f, 0x8b})
		if gzipped != strings.HasSuffix(name, ".gz") {
			t.Errorf("%s: gzip %v", name, gzipped)
		}
	}
}
