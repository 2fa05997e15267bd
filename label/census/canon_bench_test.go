package census

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

// BenchmarkCanonicalTool runs AppendCanonicalTool, as the definition hash
// does, over the tools of generated census lines: every definition
// distinct, keys in the order servers write them (rarely canonical), the
// layout of Python's json.dumps. Bytes are the tools' raw text.
func BenchmarkCanonicalTool(b *testing.B) {
	raws, size := benchTools(b, censusLines(300))
	b.SetBytes(size)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		for _, r := range raws {
			var err error
			if buf, _, _, err = AppendCanonicalTool(buf[:0], r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCanonicalPaths interleaves the general path and the fast path
// of AppendCanonicalTool pass by pass, so that a busy machine slows both
// alike, and reports each one's throughput and the ratio, of the sums and
// of the quickest passes.
func BenchmarkCanonicalPaths(b *testing.B) {
	for _, name := range []string{"real", "census"} {
		raws, size := benchTools(b, benchInputs(b)[name])
		b.Run(name, func(b *testing.B) {
			var buf []byte
			pass := func(gen bool) time.Duration {
				t0 := time.Now()
				for _, r := range raws {
					c := canonPool.Get().(*canonicalizer)
					c.general = gen
					c.findSchema, c.schemaA, c.schemaB, c.aliasA, c.aliasB = true, 0, 0, 0, 0
					var err error
					if buf, err = c.run(buf[:0], r); err != nil {
						b.Fatal(err)
					}
					c.general, c.findSchema = false, false
					c.release()
				}
				return time.Since(t0)
			}
			interleave(b, size, "general", "fast", func() time.Duration { return pass(true) }, func() time.Duration { return pass(false) })
		})
	}
}

// interleave runs the passes first and second alternately, pass by pass,
// so that a busy machine slows both alike, and reports each one's
// throughput over size bytes (<name>-MB/s) and the ratio first/second of
// the sums (x-<first>) and of the quickest passes, those least disturbed
// by other work (x-<first>-min).
func interleave(b *testing.B, size int64, firstName, secondName string, first, second func() time.Duration) {
	var sumA, sumB time.Duration
	minA, minB := time.Duration(1<<62), time.Duration(1<<62)
	for b.Loop() {
		x, y := first(), second()
		sumA += x
		sumB += y
		minA, minB = min(minA, x), min(minB, y)
	}
	n := float64(b.N)
	b.ReportMetric(float64(size)*n/sumA.Seconds()/1e6, firstName+"-MB/s")
	b.ReportMetric(float64(size)*n/sumB.Seconds()/1e6, secondName+"-MB/s")
	b.ReportMetric(sumA.Seconds()/sumB.Seconds(), "x-"+firstName)
	b.ReportMetric(minA.Seconds()/minB.Seconds(), "x-"+firstName+"-min")
}

// benchTools is the raw text of every tool of lines.
func benchTools(b *testing.B, lines [][]byte) ([][]byte, int64) {
	var raws [][]byte
	var size int64
	d := NewDecoder()
	for _, line := range lines {
		rec, err := d.Decode(line)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range rec.Tools {
			raws = append(raws, append([]byte(nil), t.Raw...))
			size += int64(len(t.Raw))
		}
	}
	return raws, size
}

// BenchmarkCanonicalDecoded interleaves AppendCanonicalTool and
// AppendCanonicalDecoded, which trusts the decoder's validation, pass by
// pass on the same tools, as BenchmarkCanonicalPaths does the two paths,
// and reports each one's throughput and the ratio of the sums and of the
// quickest passes. "real" is the bundled real tools.
func BenchmarkCanonicalDecoded(b *testing.B) {
	for _, name := range []string{"real", "census"} {
		raws, size := benchTools(b, benchInputs(b)[name])
		b.Run(name, func(b *testing.B) {
			var buf []byte
			var t Tool
			pass := func(decoded bool) time.Duration {
				t0 := time.Now()
				for _, r := range raws {
					var err error
					if decoded {
						t.Raw = r
						buf, _, _, err = AppendCanonicalDecoded(buf[:0], &t)
					} else {
						buf, _, _, err = AppendCanonicalTool(buf[:0], r)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				return time.Since(t0)
			}
			interleave(b, size, "tool", "decoded", func() time.Duration { return pass(false) }, func() time.Duration { return pass(true) })
		})
	}
}

// BenchmarkDecodeCanonical decodes census lines and writes the canonical
// form of each tool, as the pipeline's workers do for a census of
// distinct tools, three ways interleaved pass by pass: "checked" is
// AppendCanonicalTool, reading each tool's text again and checking it;
// "trusted" is AppendCanonicalDecoded without the decoder's tape, reading
// the text again without checking it; "taped" is AppendCanonicalDecoded
// from the tape the decoder recorded as it parsed. MB/s are of line
// bytes of CPU time (the process's: on a shared machine wall time counts
// the time other processes held the core); x-checked is each one's
// speed-up over checked, of the sums and of the quickest passes.
//
// "dir" is the first 16 MB of the census in ATLAS_BENCH_DIR, when that is
// set (bench-data/default: every definition distinct).
func BenchmarkDecodeCanonical(b *testing.B) {
	inputs := benchInputs(b)
	for _, name := range []string{"real", "census", "dir"} {
		b.Run(name, func(b *testing.B) {
			lines := benchLines(b, inputs, name)
			size := float64(totalBytes(lines))
			taping, plain := NewDecoder(), NewDecoder()
			plain.noTape = true
			var buf []byte
			pass := func(mode int) time.Duration {
				d := taping
				if mode != 2 {
					d = plain
				}
				t0 := cpuTime(b)
				for _, l := range lines {
					rec, err := d.Decode(l)
					if err != nil {
						b.Fatal(err)
					}
					for i := range rec.Tools {
						t := &rec.Tools[i]
						if mode == 0 {
							buf, _, _, err = AppendCanonicalTool(buf[:0], t.Raw)
						} else {
							buf, _, _, err = AppendCanonicalDecoded(buf[:0], t)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				return cpuTime(b) - t0
			}
			var sum, fastest [3]time.Duration
			fastest = [3]time.Duration{1 << 62, 1 << 62, 1 << 62}
			for b.Loop() {
				for m := range 3 {
					d := pass(m)
					sum[m] += d
					fastest[m] = min(fastest[m], d)
				}
			}
			n := float64(b.N)
			for m, mode := range []string{"checked", "trusted", "taped"} {
				b.ReportMetric(size*n/sum[m].Seconds()/1e6, mode+"-MB/s")
				if m > 0 {
					b.ReportMetric(sum[0].Seconds()/sum[m].Seconds(), mode+"-x-checked")
					b.ReportMetric(fastest[0].Seconds()/fastest[m].Seconds(), mode+"-x-checked-min")
				}
			}
		})
	}
}

// benchLines is the lines of benchInputs' input name, or for "dir" those
// of the first 16 MB of ATLAS_BENCH_DIR's census.
func benchLines(b *testing.B, inputs map[string][][]byte, name string) [][]byte {
	if name == "dir" {
		return benchDirLines(b, 16<<20)
	}
	return inputs[name]
}

// benchDirLines is the lines of the first limit bytes of the census in
// ATLAS_BENCH_DIR; the benchmark skips when that is not set.
func benchDirLines(b *testing.B, limit int64) [][]byte {
	data := realcorpus.BenchCensus(b, limit)
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// cpuTime is the CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecodeTapeCost is what recording the tape costs a caller that
// decodes without canonicalising: Decode without the tape, with it on
// every line ("forced", the decoder kept from resting), and as such a
// caller gets it (the decoder rests from taping once it sees the tapes
// unused), interleaved pass by pass, in CPU time; MB/s of line bytes,
// and each one's CPU over that without the tape.
func BenchmarkDecodeTapeCost(b *testing.B) {
	inputs := benchInputs(b)
	for _, name := range []string{"real", "census", "dir"} {
		b.Run(name, func(b *testing.B) {
			lines := benchLines(b, inputs, name)
			size := float64(totalBytes(lines))
			plain, forced, resting := NewDecoder(), NewDecoder(), NewDecoder()
			plain.noTape = true
			pass := func(d *Decoder) time.Duration {
				t0 := cpuTime(b)
				for _, l := range lines {
					if d == forced {
						d.tapeUse.rest = 0
					}
					if _, err := d.Decode(l); err != nil {
						b.Fatal(err)
					}
				}
				return cpuTime(b) - t0
			}
			var sum [3]time.Duration
			for b.Loop() {
				for i, d := range []*Decoder{plain, forced, resting} {
					sum[i] += pass(d)
				}
			}
			n := float64(b.N)
			for i, mode := range []string{"untaped", "forced", "resting"} {
				b.ReportMetric(size*n/sum[i].Seconds()/1e6, mode+"-MB/s")
				if i > 0 {
					b.ReportMetric(sum[i].Seconds()/sum[0].Seconds(), mode+"-x-cpu")
				}
			}
		})
	}
}
