package bench

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// CPUModel is the machine's processor as /proc/cpuinfo names it (its first
// "model name"), or GOARCH where that file says nothing: a ratio that holds
// on one CPU and not another is not the tool's speed, so every figure
// carries it.
func CPUModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	if v, ok := cpuinfoField(string(b), "model name"); ok {
		return v
	}
	return runtime.GOARCH
}

// cpuinfoField is the value of the first line of /proc/cpuinfo's text
// whose field is key.
func cpuinfoField(cpuinfo, key string) (string, bool) {
	for _, l := range strings.Split(cpuinfo, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// loadAvg is the one-minute load average from /proc/loadavg, and false
// where it cannot be read.
func loadAvg() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// Load is the range of the one-minute load average sampled during a loop;
// N is the number of samples (0: not available).
type Load struct {
	Min, Max float64
	N        int
}

// sample adds the current load average to l.
func (l *Load) sample() {
	v, ok := loadAvg()
	if !ok {
		return
	}
	if l.N == 0 || v < l.Min {
		l.Min = v
	}
	if l.N == 0 || v > l.Max {
		l.Max = v
	}
	l.N++
}

// String gives the range, as "2.5–4.1", or "–" without samples.
func (l Load) String() string {
	if l.N == 0 {
		return "–"
	}
	if l.Min == l.Max {
		return fmt.Sprintf("%.1f", l.Min)
	}
	return fmt.Sprintf("%.1f–%.1f", l.Min, l.Max)
}

// ratioRange is the smallest and largest of a[i]/b[i] over the pairs.
func ratioRange(a, b []time.Duration) (lo, hi float64) {
	for i := range min(len(a), len(b)) {
		if b[i] <= 0 {
			continue
		}
		r := a[i].Seconds() / b[i].Seconds()
		if lo == 0 || r < lo {
			lo = r
		}
		hi = max(hi, r)
	}
	return lo, hi
}

// isaFeature is an instruction-set extension that changes what a run
// costs: its /proc/cpuinfo flag, its name in the header, and the GODEBUG
// option by which Go turns its use off.
type isaFeature struct{ flag, name, godebug string }

// isaFeatures are the extensions the run leans on: SHA-256 in hardware
// (the tool hashes and the verification of the census file), and the
// vector widths of memmove and Parquet's bit packing. Without SHA-NI the
// same SHA-256 takes about four times the CPU.
var isaFeatures = []isaFeature{
	{"sha_ni", "SHA-NI", "cpu.sha=off"},
	{"avx2", "AVX2", "cpu.avx2=off"},
	{"avx512f", "AVX-512", "cpu.avx512f=off"},
}

// CPUFeatures says which of the extensions that change the run's cost the
// processor has ("SHA-NI yes, AVX2 yes, AVX-512 no"), and which GODEBUG
// turns off for the runs it starts (which inherit it), or "" where
// /proc/cpuinfo cannot be read.
func CPUFeatures() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	return cpuFeatures(string(b), os.Getenv("GODEBUG"))
}

// cpuFeatures is CPUFeatures from the text of /proc/cpuinfo and GODEBUG.
func cpuFeatures(cpuinfo, godebug string) string {
	v, ok := cpuinfoField(cpuinfo, "flags")
	if !ok {
		return ""
	}
	flags := map[string]bool{}
	for _, f := range strings.Fields(v) {
		flags[f] = true
	}
	off := map[string]bool{}
	for _, o := range strings.Split(godebug, ",") {
		off[strings.TrimSpace(o)] = true
	}
	var parts []string
	for _, f := range isaFeatures {
		state := "no"
		switch {
		case flags[f.flag] && (off[f.godebug] || off["cpu.all=off"]):
			state = "off (GODEBUG)"
		case flags[f.flag]:
			state = "yes"
		}
		parts = append(parts, f.name+" "+state)
	}
	return strings.Join(parts, ", ")
}
