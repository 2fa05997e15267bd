package bench

import (
	"bufio"
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
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
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
