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

func TestCPUFeatures(t *testing.T) {
	intel := "processor\t: 0\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu sse2 avx avx2 bmi2\n"
	amd := "processor\t: 0\nflags\t\t: fpu avx2 sha_ni avx512f avx512bw\n"
	for _, tc := range []struct {
		name, cpuinfo, godebug, want string
	}{
		{"without SHA-NI", intel, "", "SHA-NI no, AVX2 yes, AVX-512 no"},
		{"with all three", amd, "", "SHA-NI yes, AVX2 yes, AVX-512 yes"},
		{"turned off for the runs", amd, "madvdontneed=1,cpu.sha=off", "SHA-NI off (GODEBUG), AVX2 yes, AVX-512 yes"},
		{"all off", amd, "cpu.all=off", "SHA-NI off (GODEBUG), AVX2 off (GODEBUG), AVX-512 off (GODEBUG)"},
		{"no flags line", "processor\t: 0\n", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cpuFeatures(tc.cpuinfo, tc.godebug); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
