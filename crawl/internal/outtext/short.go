package outtext

import (
	"bytes"
	"strconv"
	"strings"
)

// LimitedBuffer keeps the first Max bytes written to it and drops the
// rest, never failing a write: a program's stderr kept for its record.
type LimitedBuffer struct {
	B   *bytes.Buffer
	Max int
}

func (l *LimitedBuffer) Write(p []byte) (int, error) {
	if room := l.Max - l.B.Len(); room > 0 {
		l.B.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// FirstLines is the first n lines of s joined by " | ", with how many
// more there were.
func FirstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "... ("+strconv.Itoa(len(lines)-n)+" more lines)")
	}
	return strings.Join(lines, " | ")
}
