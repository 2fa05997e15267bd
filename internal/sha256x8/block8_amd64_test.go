package sha256x8

import "testing"

// TestShaNIInUse checks the reading of GODEBUG that decides whether
// crypto/sha256 uses SHA-NI.
func TestShaNIInUse(t *testing.T) {
	cases := []struct {
		has     bool
		godebug string
		want    bool
	}{
		{true, "", true},
		{false, "", false},
		{true, "cpu.sha=off", false},
		{true, "madvdontneed=1,cpu.sha=off", false},
		{true, "cpu.all=off", false},
		{true, "cpu.sha=off,cpu.sha=on", true},
		{true, "cpu.all=off,cpu.sha=on", true},
		{false, "cpu.sha=on", false},
		{true, "cpu.avx2=off", true},
		{true, "cpu.shax=off", true},
	}
	for _, c := range cases {
		if got := shaNIInUse(c.has, c.godebug); got != c.want {
			t.Errorf("shaNIInUse(%v, %q) = %v, want %v", c.has, c.godebug, got, c.want)
		}
	}
}
