package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// BenchmarkRunDir times whole runs on the census in $ATLAS_BENCH_DIR (for
// example the real-schema or dense census that make bench builds), so that
// a CPU profile of Run can be taken on a census of full size:
//
//	ATLAS_BENCH_DIR=bench-data/real go test -run '^$' -bench RunDir -benchtime 2x -cpuprofile cpu.prof ./pipeline
//
// Without the variable it is skipped: it measures, it asserts nothing. It
// runs as the command does: the command's memory room, the heap advised for
// huge pages (ATLAS_BENCH_HUGE_PAGES=0 leaves it alone).
func BenchmarkRunDir(b *testing.B) {
	data := os.Getenv(realcorpus.BenchDirEnv)
	if data == "" {
		b.Skip(realcorpus.BenchDirEnv + " names no census directory")
	}
	m, err := hashverify.ReadSHA256Sums(filepath.Join(data, release.SumsFile))
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), Options{Data: data, Out: out, Manifest: m, ManifestName: "SHA256SUMS",
			MemoryRoom: DefaultMemoryRoom, HugePages: os.Getenv("ATLAS_BENCH_HUGE_PAGES") != "0"}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.SetBytes(gunzippedSize(b, filepath.Join(data, release.ToolsFile)))
}
