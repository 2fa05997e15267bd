//go:build !race

package census

const raceEnabled = false
