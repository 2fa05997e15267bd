package pipeline

import (
	"runtime/debug"
	"testing"
)

// TestMemoryLimitFollowsLasting checks that the run's soft limit is the
// room plus the lasting bytes, raised only by whole steps, never lowered,
// and that restore puts back the limit the process had.
func TestMemoryLimitFollowsLasting(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	const room = 100 << 20
	m := newMemoryLimit(room)
	for _, c := range []struct {
		lasting, want int64
	}{
		{0, room},
		{limitStep - 1, room},
		{limitStep, room + limitStep},
		{limitStep + 1, room + limitStep},
		{3 * limitStep, room + 3*limitStep},
		{limitStep, room + 3*limitStep},
	} {
		m.update(c.lasting)
		if got := debug.SetMemoryLimit(-1); got != c.want {
			t.Errorf("lasting %d: limit %d, want %d", c.lasting, got, c.want)
		}
	}
	m.restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("after restore: limit %d, want %d", got, before)
	}
	var none *memoryLimit
	none.update(1 << 30)
	newMemoryLimit(0).update(1 << 30)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("no room: limit %d, want %d", got, before)
	}
}

// TestTallyBytes checks the tally's byte count against its blocks.
func TestTallyBytes(t *testing.T) {
	var tally definitionTally
	if tally.bytes() != 0 {
		t.Fatalf("empty tally: %d bytes", tally.bytes())
	}
	tally.schemas.add(0, hash128{})
	tally.schemas.add(1, hash128{})
	if got, want := tally.bytes(), int64(2*blockItems*16); got != want {
		t.Errorf("two blocks of schemas: %d bytes, want %d", got, want)
	}
}

// TestOrdinalTable checks the name ordinals' table against a map: keys
// that share their slot bits, keys in every part, growth past many
// doublings, and counts past 32 bits.
func TestOrdinalTable(t *testing.T) {
	for _, c := range []struct {
		name string
		key  func(i int) [2]uint64
		n    int
	}{
		{"one slot", func(i int) [2]uint64 { return [2]uint64{uint64(i % 700), 0} }, 5000},
		{"all parts", func(i int) [2]uint64 { return [2]uint64{uint64(i%16) << 60, uint64(i % 3001)} }, 20000},
		{"spread", func(i int) [2]uint64 { x := uint64(i%40000) * 0x9E3779B97F4A7C15; return [2]uint64{x, x * 31} }, 100000},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tab ordinalTable
			want := map[[2]uint64]int64{}
			for i := range c.n {
				k := c.key(i)
				if got := tab.next(k); got != want[k] {
					t.Fatalf("key %d (%x): ordinal %d, want %d", i, k, got, want[k])
				}
				want[k]++
			}
			if tab.n != len(want) {
				t.Errorf("%d keys, want %d", tab.n, len(want))
			}
			if tab.bytes() <= 0 {
				t.Errorf("bytes %d", tab.bytes())
			}
		})
	}
	t.Run("past 32 bits", func(t *testing.T) {
		var tab ordinalTable
		k := [2]uint64{1, 2}
		tab.next(k)
		p := &tab.parts[0]
		for i := range p.keys {
			if p.keys[i] == k {
				p.counts[i] = ^uint32(0) - 1 // seen 2^32-2 times
			}
		}
		for want := int64(1<<32 - 2); want < 1<<32+3; want++ {
			if got := tab.next(k); got != want {
				t.Fatalf("ordinal %d, want %d", got, want)
			}
		}
	})
}
