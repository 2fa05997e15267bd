//go:build linux

package pipeline

import (
	"bytes"
	"context"
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
