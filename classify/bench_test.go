package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

// corpusProperties reads the (name, description) pairs of the top-level
// properties of the real tool schemas.
func corpusProperties(b *testing.B) [][2]string {
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
	var sink Set
	for i := 0; i < b.N; i++ {
		for _, p := range pairs {
			sink |= Property(p[0], p[1])
		}
	}
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
	var sink Set
	for i := 0; i < b.N; i++ {
		for _, p := range pairs {
			sink |= baselineProperty(p[0], p[1])
		}
	}
	_ = sink
}
