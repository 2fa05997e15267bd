//go:build race

package census

// raceEnabled says the tests run under the race detector, whose sync.Pool
// drops items at random and whose instrumentation allocates: a bound on
// the bytes a call allocates does not hold there.
const raceEnabled = true
