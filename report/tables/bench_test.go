package tables

import (
	"fmt"
	"io"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// benchChunks fills the batches of rows in chunks of 2,000 tools, as the
// run's workers hand them to the writers.
func benchChunks(r *tableRows) (tools []*ToolsBatch, props []*PropertiesBatch) {
	const chunk = 2000
	for first := 0; first < len(r.tools); first += chunk {
		tb, pb := &ToolsBatch{}, &PropertiesBatch{}
		r.fill(tb, pb, first, min(len(r.tools), first+chunk))
		tools, props = append(tools, tb), append(props, pb)
	}
	return tools, props
}

// censusRows makes rows shaped like the real-schema census's: servers of
// a few to a few hundred tools, tool and property names drawn with a long
// tail (a few names very common, tens of thousands seen once or twice),
// seven properties a tool on average, sparse labels, definitions that
// repeat across servers.
func censusRows(rng *rand.Rand, tools int) *tableRows {
	r := &tableRows{}
	zipf := func(n uint64) *rand.Zipf { return rand.NewZipf(rng, 1.1, 4, n) }
	toolNames, propNames, defs := zipf(60_000), zipf(40_000), zipf(uint64(tools/20))
	var server *string
	left := 0
	for i := range tools {
		if left == 0 {
			s := fmt.Sprintf("https://mcp-%d.example.com/sse", i)
			server, left = &s, 1+rng.IntN(60)
		}
		left--
		name := fmt.Sprintf("tool_%d", toolNames.Uint64())
		t := toolValues{server: server, name: &name, line: int64(i + 1), hasSchema: true}
		d := defs.Uint64()
		t.def, t.schema = Hash{byte(d), byte(d >> 8), byte(d >> 16), 1}, Hash{byte(d), byte(d >> 8), byte(d >> 16), 2}
		t.firstProp = len(r.props)
		for range rng.IntN(15) {
			p := propValues{name: fmt.Sprintf("param%d", propNames.Uint64()), where: "properties", required: rng.IntN(3) == 0}
			if rng.IntN(8) == 0 {
				p.labels = classify.Set(1) << rng.IntN(7)
			}
			if rng.IntN(30) == 0 {
				p.where = "$defs/Item"
			}
			t.labels |= p.labels
			r.props = append(r.props, p)
		}
		t.lastProp = len(r.props)
		t.count = int32(t.lastProp - t.firstProp)
		r.tools = append(r.tools, t)
	}
	return r
}

// BenchmarkWriters writes tools.parquet and properties.parquet from ready
// batches: the writers' own cost, column building, encoding and
// compression. "gen" is the round-trip test's 200,000 random tools;
// "census" 200,000 tools shaped like the real-schema census (about 1.4
// million properties).
func BenchmarkWriters(b *testing.B) {
	b.Run("gen", func(b *testing.B) { benchWriters(b, genRows(rand.New(rand.NewPCG(5, 6)), 200_000)) })
	b.Run("census", func(b *testing.B) { benchWriters(b, censusRows(rand.New(rand.NewPCG(7, 8)), 200_000)) })
}

func benchWriters(b *testing.B, rows *tableRows) {
	tools, props := benchChunks(rows)
	b.Run("tools", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			w, err := NewToolsWriter(io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			for _, tb := range tools {
				if err := w.Append(tb); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("properties", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			w, err := NewPropertiesWriter(io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			first := int64(0)
			for i, pb := range props {
				if err := w.Append(pb, tools[i], first); err != nil {
					b.Fatal(err)
				}
				first += int64(tools[i].Len())
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// reportCPU reports the process's CPU time (user and system, the garbage
// collector's included) per operation from now until the returned function
// runs, as cpu-ns/op: on a machine other work keeps busy, wall time per
// operation says little about what the code costs.
func reportCPU(b *testing.B) func() {
	start := cpuTime(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
