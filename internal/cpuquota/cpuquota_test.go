package cpuquota

import (
	"math"
	"runtime"
	"testing"
)

func TestFitted(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    float64
		ok   bool
		cur  int
		want int
	}{
		{"no quota", 0, false, 2, 2},
		{"one CPU, the runtime's floor of two", 1, true, 2, 1},
		{"half a CPU", 0.5, true, 2, 1},
		{"a sliver", 0.01, true, 2, 1},
		{"one and a half", 1.5, true, 2, 2},
		{"two", 2, true, 2, 2},
		{"more than the machine", 8, true, 2, 2},
		{"three of eight", 2.5, true, 8, 3},
		{"already one", 1, true, 1, 1},
		{"zero (unreadable)", 0, true, 2, 2},
		{"infinite", math.Inf(1), true, 2, 2},
		{"not a number", math.NaN(), true, 2, 2},
	} {
		if got := fitted(tc.q, tc.ok, tc.cur); got != tc.want {
			t.Errorf("%s: fitted(%v, %v, %d) = %d, want %d", tc.name, tc.q, tc.ok, tc.cur, got, tc.want)
		}
	}
}

// TestReadLeavesGOMAXPROCS holds Read to reading: whatever the machine's
// quota, GOMAXPROCS is what it was.
func TestReadLeavesGOMAXPROCS(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	q, ok := Read()
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Fatalf("Read changed GOMAXPROCS from %d to %d", before, after)
	}
	if ok && q <= 0 {
		t.Fatalf("Read reported a quota of %v CPUs", q)
	}
	t.Logf("quota %v (defined %v), GOMAXPROCS %d", q, ok, before)
}

// TestReadHonoursEnvironment: a GOMAXPROCS the user set is theirs.
func TestReadHonoursEnvironment(t *testing.T) {
	t.Setenv("GOMAXPROCS", "2")
	if q, ok := Read(); ok {
		t.Fatalf("Read with GOMAXPROCS set reported a quota of %v", q)
	}
}
