// Package defaults holds the rule every options struct of the project
// follows: a field left at its zero value (or set negative) takes the
// documented default.
package defaults

import (
	"cmp"
	"log/slog"
)

// Set stores d in *v when *v is not above the zero value: zero or negative
// for numbers and durations, the empty string for strings.
func Set[T cmp.Ordered](v *T, d T) {
	var zero T
	if *v <= zero {
		*v = d
	}
}

// Logger returns l, or a logger that discards every record when l is nil:
// the one way an options struct's nil *slog.Logger means "no logging".
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
