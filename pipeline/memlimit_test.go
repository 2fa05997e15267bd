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
