package census

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

// censusLines generates census-like lines: one server per line with about
// 18 tools, each with about 4 short properties, a required list and
// sometimes $defs, in the layout of Python's json.dumps (", " and ": ",
// non-ASCII escaped), about 400 bytes per tool as in the design's synthetic
// census.
func censusLines(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("file path query limit owner repo branch url token id name content text data user " +
		"account amount currency command args page size sort order filter format mode target host issue title body")
	descs := []string{
		"Path to the file", "Maximum number of results", "Search query", "Repository owner",
		"The URL to fetch", "API token for authentication", "Identifier of the record",
		"Shell command to run", "Amount in USD", "Page number (default: 1)", "Output format: json or text",
		"Caf\\u00e9 name", "Target host name", "Free-form instructions for the model",
	}
	types := []string{"string", "integer", "boolean", "number", "array", "object"}
	var lines [][]byte
	for l := 0; l < n; l++ {
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"server_id": "srv-%05d", "server_url": "https://mcp.example.com/%d/sse", "tools": [`, l, l)
		tools := 14 + rng.IntN(9)
		for t := 0; t < tools; t++ {
			if t > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"name": "%s_%s", "description": "%s. %s.", "inputSchema": {"type": "object", "properties": {`,
				words[rng.IntN(len(words))], words[rng.IntN(len(words))], descs[rng.IntN(len(descs))], descs[rng.IntN(len(descs))])
			props := 2 + rng.IntN(5)
			var req []string
			for p := 0; p < props; p++ {
				if p > 0 {
					b.WriteString(", ")
				}
				name := words[rng.IntN(len(words))] + fmt.Sprint(p)
				fmt.Fprintf(&b, `"%s": {"type": "%s", "description": "%s"}`, name, types[rng.IntN(len(types))], descs[rng.IntN(len(descs))])
				if rng.IntN(2) == 0 {
					req = append(req, `"`+name+`"`)
				}
			}
			fmt.Fprintf(&b, `}, "required": [%s]`, strings.Join(req, ", "))
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&b, `, "$defs": {"Opts": {"type": "object", "properties": {"%s": {"type": "boolean", "description": "%s"}}}}`,
					words[rng.IntN(len(words))], descs[rng.IntN(len(descs))])
			}
			b.WriteString(`, "additionalProperties": false}}`)
		}
		b.WriteString("]}")
		lines = append(lines, b.Bytes())
	}
	return lines
}

func totalBytes(lines [][]byte) int64 {
	var n int64
	for _, l := range lines {
		n += int64(len(l)) + 1 // the newline the splitter removed
	}
	return n
}

func benchInputs(b *testing.B) map[string][][]byte {
	return map[string][][]byte{
		"real":   realcorpus.Lines(b),
		"census": censusLines(300),
	}
}

// BenchmarkDecode measures Decoder.Decode over whole inputs; MB/s is of
// line bytes.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"real", "census"} {
		lines := benchInputs(b)[name]
		b.Run(name, func(b *testing.B) {
			d := NewDecoder()
			b.SetBytes(totalBytes(lines))
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range lines {
					if _, err := d.Decode(l); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkStdlibMap is the comparison: encoding/json into map[string]any
// on the same inputs.
func BenchmarkStdlibMap(b *testing.B) {
	for _, name := range []string{"real", "census"} {
		lines := benchInputs(b)[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(totalBytes(lines))
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range lines {
					var v map[string]any
					if err := json.Unmarshal(l, &v); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkReferenceDecode shows what the slow reference costs.
func BenchmarkReferenceDecode(b *testing.B) {
	lines := benchInputs(b)["census"][:50]
	b.SetBytes(totalBytes(lines))
	for b.Loop() {
		for _, l := range lines {
			if _, err := ReferenceDecode(l); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestCensusLinesMatchReference keeps the benchmark input honest: it decodes
// to what the slow reference says.
func TestCensusLinesMatchReference(t *testing.T) {
	d := NewDecoder()
	props := 0
	for _, l := range censusLines(40) {
		got, err := d.Decode(l)
		want, werr := ReferenceDecode(l)
		if diff := diffRecords(got, err, want, werr); diff != "" {
			t.Fatal(diff)
		}
		for _, tl := range got.Tools {
			props += len(tl.Properties)
		}
	}
	if props == 0 {
		t.Fatal("no properties generated")
	}
}

// TestZeroAllocs: once warmed up, Decode allocates nothing per line.
func TestZeroAllocs(t *testing.T) {
	lines := append(realcorpus.Lines(t), censusLines(20)...)
	d := NewDecoder()
	for _, l := range lines {
		if _, err := d.Decode(l); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(3, func() {
		for _, l := range lines {
			if _, err := d.Decode(l); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pass over %d lines, want 0", allocs, len(lines))
	}
}

// BenchmarkVsStdlib interleaves the two decoders pass by pass, so that a
// busy machine slows both alike, and reports each one's throughput and the
// ratio.
func BenchmarkVsStdlib(b *testing.B) {
	for _, name := range []string{"real", "census"} {
		lines := benchInputs(b)[name]
		b.Run(name, func(b *testing.B) {
			size := float64(totalBytes(lines))
			d := NewDecoder()
			var fast, std time.Duration
			for b.Loop() {
				t0 := time.Now()
				for _, l := range lines {
					if _, err := d.Decode(l); err != nil {
						b.Fatal(err)
					}
				}
				t1 := time.Now()
				for _, l := range lines {
					var v map[string]any
					if err := json.Unmarshal(l, &v); err != nil {
						b.Fatal(err)
					}
				}
				fast += t1.Sub(t0)
				std += time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(size*n/fast.Seconds()/1e6, "census-MB/s")
			b.ReportMetric(size*n/std.Seconds()/1e6, "stdlib-MB/s")
			b.ReportMetric(std.Seconds()/fast.Seconds(), "x-stdlib")
		})
	}
}
