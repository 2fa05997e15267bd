package aggregate

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// TestMergeEqualsSerial splits a stream of tools over workers, counts each
// part concurrently, merges, and requires the serial counts.
func TestMergeEqualsSerial(t *testing.T) {
	h := NewHasher()
	type tool struct {
		labels, required classify.Set
		props            int
		server           string
	}
	rng := rand.New(rand.NewPCG(1, 2))
	tools := make([]tool, 50000)
	for i := range tools {
		l := classify.Set(rng.IntN(1 << 7))
		tools[i] = tool{l, l & classify.Set(rng.IntN(1<<7)), rng.IntN(9), fmt.Sprintf("srv-%d", rng.IntN(3000))}
	}
	add := func(c *Counters, t tool) {
		k := h.Key([]byte(t.server))
		c.AddTool(t.labels, t.required, t.props)
		var flags uint8
		if t.labels&classify.URLEndpoint != 0 {
			c.AddSurface("x")
			flags = 1
		}
		c.AddServer(k, flags)
	}
	serial := New()
	for _, tl := range tools {
		add(serial, tl)
	}
	for _, workers := range []int{1, 3, 8} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			parts := make([]*Counters, workers)
			var wg sync.WaitGroup
			for w := range parts {
				parts[w] = New()
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < len(tools); i += workers {
						add(parts[w], tools[i])
					}
				}()
			}
			wg.Wait()
			merged := New()
			for _, p := range parts {
				merged.Merge(p)
			}
			if merged.Tools != serial.Tools || merged.Properties != serial.Properties || merged.Labels != serial.Labels ||
				merged.Required != serial.Required || len(merged.Servers) != len(serial.Servers) ||
				merged.Surface["x"] != serial.Surface["x"] || merged.ServersWith(1) != serial.ServersWith(1) {
				t.Fatalf("workers=%d: merged counts differ from serial", workers)
			}
		})
	}
	if n := serial.ServersWith(1); n == 0 || n >= int64(len(serial.Servers)) {
		t.Fatalf("ServersWith(1) = %d of %d servers: the flag is not exercised both ways", n, len(serial.Servers))
	}
	if len(serial.Servers) < 2900 || serial.Tools != 50000 {
		t.Fatalf("serial: %d servers, %d tools", len(serial.Servers), serial.Tools)
	}
	tl, rq := serial.Label(classify.MoneyAmount)
	if tl == 0 || rq > tl {
		t.Fatalf("Label(money) = %d, %d", tl, rq)
	}
}
