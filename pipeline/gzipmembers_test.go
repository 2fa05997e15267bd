package pipeline

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// TestGzipMembers runs a census whose tools file is several gzip members
// (as pigz, bgzip or a concatenation of files write it), cut inside lines
// and each compressed its own way, against the same census in one member:
// the tables and the counts must be the same.
func TestGzipMembers(t *testing.T) {
	data, sums := smallCensus(t, 3000)
	whole, err := os.ReadFile(filepath.Join(data, release.ToolsFile))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(whole))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	// Cuts inside lines; the last member is empty.
	cuts := []int{0, len(plain) / 5, len(plain)/5 + 7, len(plain) * 3 / 4, len(plain), len(plain)}
	levels := []int{flate.NoCompression, flate.HuffmanOnly, flate.BestSpeed, flate.BestCompression, flate.DefaultCompression}
	var members bytes.Buffer
	for i := 0; i+1 < len(cuts); i++ {
		zw, err := gzip.NewWriterLevel(&members, levels[i])
		if err != nil {
			t.Fatal(err)
		}
		zw.Name = fmt.Sprintf("part%d", i)
		zw.Write(plain[cuts[i]:cuts[i+1]])
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}

	split := t.TempDir()
	m := hashverify.Manifest{}
	for _, name := range hashverify.SnapshotFiles() {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == release.ToolsFile {
			b = members.Bytes()
		}
		if err := os.WriteFile(filepath.Join(split, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		m[name] = hex.EncodeToString(h[:])
	}

	one := runOpts(t, data, sums)
	r1, err := Run(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	many := Options{Data: split, Out: t.TempDir(), Manifest: m, ManifestName: one.ManifestName, Workers: 2, ChunkSize: 4096}
	r2, err := Run(context.Background(), many)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Tools != r2.Tools || r1.Servers != r2.Servers || r1.Tools < 3000 {
		t.Fatalf("one member: %d tools on %d servers; five: %d on %d", r1.Tools, r1.Servers, r2.Tools, r2.Servers)
	}
	for _, f := range []string{"tools.parquet", "properties.parquet"} {
		a, err := os.ReadFile(filepath.Join(one.Out, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(many.Out, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the census in one gzip member and in five", f)
		}
	}
}
