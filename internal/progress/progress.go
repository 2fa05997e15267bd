// Package progress is the one shape in which a package tells how far a
// long task has got: a Func told a Report after each step. Packages count;
// only the command draws (cmd/atlas-reproduce/progress.go), so that no
// library depends on a terminal or a bar library.
package progress

import "fmt"

// Report is a task's state at one moment.
type Report struct {
	// Task names what is counted: a file's name, or the stage ("crawl",
	// "synth").
	Task string
	// Done of Total units are finished; the unit is the task's own (bytes
	// of a file, servers, tools).
	Done, Total int64
	// Failed counts the units among Done that failed (a crawl's
	// unreachable servers); zero for a task whose units cannot fail.
	Failed int64
}

// Func is told a task's state after each step, from one goroutine at a
// time. It must be quick: it runs on the task's own goroutine.
type Func func(Report)

// Tell calls f with r, unless f is nil: a nil Func is the "no progress"
// every Options struct starts with.
func (f Func) Tell(r Report) {
	if f != nil {
		f(r)
	}
}

// Bytes writes a count of bytes in binary units (1.5 MiB), as the drawn
// progress and the messages beside it say sizes.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
