package sensitivity_test

import (
	"bytes"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

// BenchmarkDeep walks every input schema of the real corpus whole
// (Labels), the deep variant's worst case: its cost is the lexer's skips
// and strings plus the classification of every nested property.
func BenchmarkDeep(b *testing.B) {
	var schemas [][]byte
	var size int64
	d := census.NewDecoder()
	for _, line := range bytes.Split(bytes.TrimSpace(realcorpus.MustRead(b)), []byte{'\n'}) {
		rec, err := d.Decode(line)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range rec.Tools {
			if t.Schema != nil {
				schemas = append(schemas, bytes.Clone(t.Schema))
				size += int64(len(t.Schema))
			}
		}
	}
	var w sensitivity.Deep
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range schemas {
			w.Labels(s)
		}
	}
}

// benchTool is a decoded tool and the classes of its normative properties,
// what the run hands Analyzer.Tool.
type benchTool struct {
	t    *census.Tool
	base classify.Set
}

// benchTools decodes the lines of data, each with a decoder of its own so
// that the tools stay valid, and returns them with their normative labels
// and the bytes of their tool objects.
func benchTools(b *testing.B, data []byte) ([]benchTool, int64) {
	b.Helper()
	var tools []benchTool
	var size int64
	for line := range bytes.Lines(data) {
		if census.IsBlank(line) {
			continue
		}
		rec, err := census.NewDecoder().Decode(line)
		if err != nil {
			b.Fatal(err)
		}
		for i := range rec.Tools {
			t := &rec.Tools[i]
			var base classify.Set
			for _, p := range t.Properties {
				base |= classify.PropertyBytes(p.Name, p.Description)
			}
			tools = append(tools, benchTool{t, base})
			size += int64(len(t.Raw))
		}
	}
	return tools, size
}

// benchCensusPrefix is how much of ATLAS_BENCH_DIR's census
// BenchmarkAnalyzerTool reads: enough lines for a profile, little memory.
const benchCensusPrefix = 16 << 20

// benchInputs are the texts the benchmarks below read: the real corpus,
// and the first 16 MB of ATLAS_BENCH_DIR's census when that is set.
var benchInputs = []struct {
	name string
	data func(b *testing.B) []byte
}{
	{"real", func(b *testing.B) []byte { return realcorpus.MustRead(b) }},
	{"census", func(b *testing.B) []byte { return realcorpus.BenchCensus(b, benchCensusPrefix) }},
}

// BenchmarkAnalyzerTool runs the three variants over every tool of the
// real corpus, as the run does once per distinct tool text, and over the
// first 16 MB of the census in ATLAS_BENCH_DIR when that is set (the dense
// census of BENCH.md: every definition distinct).
func BenchmarkAnalyzerTool(b *testing.B) {
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			tools, size := benchTools(b, in.data(b))
			var a sensitivity.Analyzer
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for _, t := range tools {
					a.Tool(t.t, t.base)
				}
			}
		})
	}
}

// BenchmarkBeyond is the deep walk of every tool of the real corpus (and of
// ATLAS_BENCH_DIR's census's first 16 MB when that is set) over the schema's
// text and over the decoder's tape, as Analyzer.Tool takes it. Each line
// has a decoder of its own (benchTools), so the tapes are read cold, where
// the run reads each tape just after its decoder wrote it: the figures are
// for comparing the two walks, not for the run's cost.
func BenchmarkBeyond(b *testing.B) {
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			tools, size := benchTools(b, in.data(b))
			var w sensitivity.Deep
			b.Run("text", func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					for _, t := range tools {
						if t.t.Schema != nil {
							w.Beyond(t.t.Schema)
						}
					}
				}
			})
			b.Run("tape", func(b *testing.B) {
				for _, t := range tools {
					if _, ok := w.BeyondTape(t.t); !ok && t.t.Schema != nil {
						b.Fatalf("tool at %d has no tape", t.t.Offset)
					}
				}
				b.SetBytes(size)
				for b.Loop() {
					for _, t := range tools {
						w.BeyondTape(t.t)
					}
				}
			})
		})
	}
}
