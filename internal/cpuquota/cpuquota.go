// Package cpuquota fits the Go scheduler to a CPU bandwidth quota of one
// CPU or less, the quota of many containers and CI jobs.
//
// Since Go 1.25 the runtime sets GOMAXPROCS to the quota of its cgroup
// rounded up, but never below two. Under a quota of one CPU a census run
// with two Ps spends its quota on two threads at once, is throttled for the
// rest of each period, and pays for the hand-offs between them: measured
// under a cgroup quota of one CPU, one P saves 2–17% of the run's CPU,
// and as much of its wall time, on bench's five censuses (BENCH.md,
// "Under a CPU quota"). Fit gives such a process one P.
//
// The quota is read by go.uber.org/automaxprocs, which knows cgroup v1 and
// v2 and where each is mounted.
package cpuquota

import (
	"math"
	"os"
	"runtime"
	"sync"

	"go.uber.org/automaxprocs/maxprocs"
)

// Result says what Fit did.
type Result struct {
	// Quota is the process's CPU bandwidth quota in CPUs, 0 when it has
	// none (or it could not be read, or GOMAXPROCS is set in the
	// environment, which Fit leaves alone).
	Quota float64
	// Before and After are GOMAXPROCS before and after Fit.
	Before, After int
}

var (
	once sync.Once
	done Result
)

// Fit lowers GOMAXPROCS to the process's CPU quota rounded up, where that
// is lower, once per process (later calls return the first call's Result).
// It does nothing when GOMAXPROCS is set in the environment.
func Fit() Result {
	once.Do(func() {
		q, ok := Read()
		cur := runtime.GOMAXPROCS(0)
		done = Result{Quota: q, Before: cur, After: cur}
		if n := fitted(q, ok, cur); n != cur {
			runtime.GOMAXPROCS(n)
			done.After = n
		}
	})
	return done
}

// fitted is the GOMAXPROCS for a quota of q CPUs (ok when there is one)
// and a current GOMAXPROCS of cur: the quota rounded up, at least one,
// where that is below cur.
func fitted(q float64, ok bool, cur int) int {
	if !ok || q <= 0 || math.IsInf(q, 0) || math.IsNaN(q) {
		return cur
	}
	if n := max(1, int(math.Ceil(q))); n < cur {
		return n
	}
	return cur
}

// Read returns the process's CPU bandwidth quota in CPUs, and whether it
// has one. It reports none when GOMAXPROCS is set in the environment.
// GOMAXPROCS and the runtime's own tracking of the quota are left as
// they were.
func Read() (float64, bool) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		return 0, false
	}
	var quota float64
	var ok bool
	// maxprocs.Set hands the quota to the rounding function and sets
	// GOMAXPROCS to what it returns: returning the current value reads the
	// quota without changing anything but the runtime's tracking, which
	// SetDefaultGOMAXPROCS puts back.
	if _, err := maxprocs.Set(maxprocs.Logger(func(string, ...any) {}), maxprocs.RoundQuotaFunc(func(q float64) int {
		quota, ok = q, true
		return runtime.GOMAXPROCS(0)
	})); err != nil {
		return 0, false
	}
	if ok {
		runtime.SetDefaultGOMAXPROCS()
	}
	return quota, ok
}
