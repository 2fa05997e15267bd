//go:build unix

package pipeline

import (
	"context"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSensitivityCost times the whole run with and without the
// sensitivity variants on the same census (synthetic, then 50,000 tools
// drawn from the bundled real schemas), the two back to back in
// every iteration (alternating which goes first) so that both see the same
// machine. It reports the median over iterations of the on/off ratio of
// wall time and of process CPU time; CPU time is the steadier on a shared
// machine.
func BenchmarkSensitivityCost(b *testing.B) {
	b.Run("synth", func(b *testing.B) {
		data := b.TempDir()
		opt := synth.DefaultOptions()
		opt.Tools, opt.Servers = 50000, 2851
		if _, err := synth.Write(context.Background(), data, opt); err != nil {
			b.Fatal(err)
		}
		benchSensitivity(b, data, filepath.Join(data, release.SumsFile))
	})
	b.Run("real", func(b *testing.B) {
		data, sums := smallCensus(b, 50000)
		benchSensitivity(b, data, sums)
	})
}

func benchSensitivity(b *testing.B, data, sums string) {
	m, err := hashverify.ReadSHA256Sums(sums)
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	var wall, cpu []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var w, c [2]time.Duration // [off, on]
		for k := range 2 {
			on := (i+k)%2 == 1
			start, start0 := time.Now(), cpuTime(b)
			if _, err := Run(context.Background(), Options{Data: data, Out: out, Manifest: m, ManifestName: "SHA256SUMS", NoSensitivity: !on}); err != nil {
				b.Fatal(err)
			}
			idx := 0
			if on {
				idx = 1
			}
			w[idx], c[idx] = time.Since(start), cpuTime(b)-start0
		}
		wall = append(wall, w[1].Seconds()/w[0].Seconds())
		cpu = append(cpu, c[1].Seconds()/c[0].Seconds())
	}
	b.StopTimer()
	median := func(xs []float64) float64 {
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	b.ReportMetric(median(wall), "on/off-wall")
	b.ReportMetric(median(cpu), "on/off-cpu")
}
