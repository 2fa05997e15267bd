package linepool

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// smallReads hands out at most 16 KiB a read, as a gzip reader does, so
// that filling a chunk takes many reads.
type smallReads struct{ r *bytes.Reader }

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 16<<10)]) }

// BenchmarkSplit times the reader side: cutting a stream of short lines,
// and of lines longer than a chunk, into chunks of whole lines.
func BenchmarkSplit(b *testing.B) {
	for _, tc := range []struct {
		name string
		line int
	}{{"short", 200}, {"long", 3 << 20}} {
		input := []byte(strings.Repeat(strings.Repeat("x", tc.line-1)+"\n", (32<<20)/tc.line))
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(input)))
			for b.Loop() {
				var lines int
				err := Run(context.Background(), smallReads{bytes.NewReader(input)}, Config{Workers: 1},
					func(_ context.Context, _ int, c *Chunk) (int, error) { return bytes.Count(c.Data, []byte{'\n'}), nil },
					func(n int) error { lines += n; return nil })
				if err != nil || lines != len(input)/tc.line {
					b.Fatalf("%d lines, %v", lines, err)
				}
			}
		})
	}
}
