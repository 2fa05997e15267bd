package bench

import (
	"runtime"
	"testing"
	"time"
)

func TestRatioRange(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name   string
		a, b   []time.Duration
		lo, hi float64
	}{
		{"pairs", []time.Duration{2 * s, 3 * s, 5 * s}, []time.Duration{s, s, 2 * s}, 2, 3},
		{"a zero divisor is skipped", []time.Duration{2 * s, 4 * s}, []time.Duration{0, s}, 4, 4},
		{"unequal lengths pair the first", []time.Duration{2 * s}, []time.Duration{s, s}, 2, 2},
		{"none", nil, nil, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := ratioRange(tc.a, tc.b)
			if lo != tc.lo || hi != tc.hi {
				t.Errorf("got %v–%v, want %v–%v", lo, hi, tc.lo, tc.hi)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	var l Load
	if l.String() != "–" {
		t.Errorf("empty load %q", l.String())
	}
	l.sample()
	l.sample()
	if runtime.GOOS == "linux" {
		if l.N != 2 || l.Min < 0 || l.Max < l.Min {
			t.Errorf("load %+v", l)
		}
	}
	for _, tc := range []struct {
		l    Load
		want string
	}{
		{Load{Min: 2.5, Max: 4.125, N: 3}, "2.5–4.1"},
		{Load{Min: 1, Max: 1, N: 1}, "1.0"},
	} {
		if got := tc.l.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.l, got, tc.want)
		}
	}
	if CPUModel() == "" {
		t.Error("no CPU model")
	}
}
