//go:build race

package probe_test

// raceEnabled says the tests run under the race detector, which makes a
// 21 MB JSON exchange take minutes instead of seconds.
const raceEnabled = true
