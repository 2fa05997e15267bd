//go:build linux

package linepool

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestLongLineOutsideHeap: a line of 40 chunks is read into mapped memory
// grown in place, not into the Go heap (growing a heap buffer by doubling
// allocated over three times the line), and freed when its chunk is
// released.
func TestLongLineOutsideHeap(t *testing.T) {
	const chunk = 1 << 20
	line := strings.Repeat("q", 40*chunk+chunk/2)
	input, lineB := "a\n"+line+"\nb\n", []byte(line)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var held int64
	err := Run(context.Background(), strings.NewReader(input), Config{Workers: 1, ChunkSize: chunk},
		func(_ context.Context, _ int, c *Chunk) (int, error) {
			if bytes.Contains(c.Data, lineB) {
				held = bigInUse.Load()
			}
			return len(c.Data), nil
		},
		func(int) error { return nil })
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(line)/4) {
		t.Errorf("a %d-byte line allocated %d bytes of Go heap", len(line), alloc)
	}
	if held < int64(len(line)) {
		t.Errorf("%d bytes mapped while the line was worked on, want at least %d", held, len(line))
	}
	if n := bigInUse.Load(); n != 0 {
		t.Errorf("%d bytes still mapped after Run", n)
	}
}

// TestLongLineBufferStopsAtLimit: a line over MaxLine is refused once the
// buffer holds MaxLine+1 bytes, never after growing past that (doubling
// used to take the buffer to twice the limit before the check).
func TestLongLineBufferStopsAtLimit(t *testing.T) {
	const chunk = 1 << 20
	const maxLine = 5*chunk + 12345 // not a doubling of the first buffer
	for _, tc := range []struct {
		name    string
		line    int
		tooLong bool
	}{
		{"far over the limit", 20 * chunk, true},
		{"one byte over", maxLine + 1, true},
		{"exactly the limit", maxLine, false},
		{"under the limit", 3 * chunk, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bigHigh.Store(0)
			input := "a\n" + strings.Repeat("q", tc.line) + "\nb\n"
			err := Run(context.Background(), strings.NewReader(input), Config{Workers: 1, ChunkSize: chunk, MaxLine: maxLine},
				func(_ context.Context, _ int, c *Chunk) (int, error) { return len(c.Data), nil },
				func(int) error { return nil })
			var le *LineTooLongError
			if got := errors.As(err, &le); got != tc.tooLong {
				t.Fatalf("Run = %v, want too long %v", err, tc.tooLong)
			}
			if tc.tooLong && (le.Size != int64(tc.line) || le.Line != 2) {
				t.Errorf("error says line %d of %d bytes, want line 2 of %d", le.Line, le.Size, tc.line)
			}
			if high := bigHigh.Load(); high > maxLine+1 {
				t.Errorf("the line's buffer grew to %d bytes, past the limit %d+1", high, maxLine)
			}
			if n := bigInUse.Load(); n != 0 {
				t.Errorf("%d bytes still mapped after Run", n)
			}
		})
	}
}
