package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

// corpusProperties reads the (name, description) pairs of the top-level
// properties of the real tool schemas.
func corpusProperties(b testing.TB) [][2]string {
	var pairs [][2]string
	sc := bufio.NewScanner(bytes.NewReader(realcorpus.MustRead(b)))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			Tool struct {
				InputSchema struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"inputSchema"`
			} `json:"tool"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		for name, raw := range rec.Tool.InputSchema.Properties {
			var p struct {
				Description any `json:"description"`
			}
			_ = json.Unmarshal(raw, &p)
			d, _ := p.Description.(string)
			pairs = append(pairs, [2]string{name, d})
		}
	}
	if len(pairs) == 0 {
		b.Fatal("no properties in the real corpus")
	}
	return pairs
}

// cpuTime is the CPU time the process has used. On a shared machine a
// benchmark's wall time includes the time other processes held its core;
// its CPU time does not, so MB/s of CPU time is the figure per core.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuClock reports, when stopped, haystack MB per second of CPU time.
type cpuClock struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuClock { return cpuClock{b, cpuTime(b)} }

func (c cpuClock) stop(bytesPerOp int64) {
	if d := cpuTime(c.b) - c.start; d > 0 {
		c.b.ReportMetric(float64(bytesPerOp)*float64(c.b.N)/d.Seconds()/1e6, "cpu-MB/s")
	}
}

// BenchmarkProperty reports haystack MB/s (name + " : " + description) and
// properties per second of the fast matcher on the real schemas.
func BenchmarkProperty(b *testing.B) {
	pairs := corpusProperties(b)
	var bytes int64
	for _, p := range pairs {
		bytes += int64(len(p[0]) + 3 + len(p[1]))
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(b)
	var sink Set
	for i := 0; i < b.N; i++ {
		for _, p := range pairs {
			sink |= Property(p[0], p[1])
		}
	}
	cpu.stop(bytes)
	b.ReportMetric(float64(b.N)*float64(len(pairs))/b.Elapsed().Seconds(), "props/s")
	_ = sink
}

// BenchmarkReference is the slow matcher on the same input, for scale.
func BenchmarkReference(b *testing.B) {
	pairs := corpusProperties(b)
	var bytes int64
	for _, p := range pairs {
		bytes += int64(len(p[0]) + 3 + len(p[1]))
	}
	b.SetBytes(bytes)
	for i := 0; i < b.N; i++ {
		for _, p := range pairs {
			referenceProperty(p[0], p[1])
		}
	}
}

// BenchmarkBaseline is the exact matcher without the ASCII fast path on the
// same input, so one run gives the fast path's speed-up.
func BenchmarkBaseline(b *testing.B) {
	pairs := corpusProperties(b)
	var bytes int64
	for _, p := range pairs {
		bytes += int64(len(p[0]) + 3 + len(p[1]))
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU(b)
	var sink Set
	for i := 0; i < b.N; i++ {
		for _, p := range pairs {
			sink |= baselineProperty(p[0], p[1])
		}
	}
	cpu.stop(bytes)
	_ = sink
}
