package pipeline

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// BenchmarkRun times the whole run (verify, gunzip, decode, classify,
// aggregate, Parquet, reports) on a synthetic census; bytes are the
// uncompressed JSON of server_tools.jsonl.gz.
func BenchmarkRun(b *testing.B) {
	opt := synth.DefaultOptions()
	opt.Tools, opt.Servers = 50000, 2851
	benchRun(b, opt)
}

// benchRun synthesises the census opt describes and times whole runs on it,
// checking each run counts every tool.
func benchRun(b *testing.B, opt synth.Options) {
	data := b.TempDir()
	if _, err := synth.Write(context.Background(), data, opt); err != nil {
		b.Fatal(err)
	}
	m, err := hashverify.ReadSHA256Sums(filepath.Join(data, release.SumsFile))
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Run(context.Background(), Options{Data: data, Out: out, Manifest: m, ManifestName: "SHA256SUMS"})
		if err != nil {
			b.Fatal(err)
		}
		if r.Tools != int64(opt.Tools) {
			b.Fatalf("%d tools, want %d", r.Tools, opt.Tools)
		}
	}
	b.StopTimer()
	b.SetBytes(gunzippedSize(b, filepath.Join(data, release.ToolsFile)))
	b.ReportMetric(float64(int64(opt.Tools)*int64(b.N))/b.Elapsed().Seconds(), "tools/s")
}

func gunzippedSize(b *testing.B, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkRunHeavyTail times the whole run on a census of the snapshot's
// size with a heavy tail (the largest server has 39,000 tools, a line of
// about 16 MB): the shape on which the tables and memory are judged.
func BenchmarkRunHeavyTail(b *testing.B) {
	opt := synth.DefaultOptions()
	opt.MaxServerTools = 39000
	benchRun(b, opt)
}
