// Package outtext makes what a program printed fit a record: volatile
// parts masked so that a record is the same from one crawl to the next,
// and a bounded, short excerpt.
package outtext

import "regexp"

// volatile are the parts of a server's stderr that change from one run
// of the same package to the next: clock times (ISO 8601, and epoch
// seconds or milliseconds of this century as loggers such as pino print
// them). The sandbox makes the rest steady: the process ids of its PID
// namespace and its host name are the same every run.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	// npm names its logs 2026-12-05T17_27_16_694Z-debug-0.log.
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}[:_]\d{2}(?:[:_]\d{2}(?:[.,_]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?`), "<time>"},
	{regexp.MustCompile(`\b(?:1[5-9]|2\d)\d{8}(?:\d{3})?\b`), "<time>"},
}

// Steady masks the volatile parts of text a server printed, so that
// a record quoting it is the same when the same package is crawled again:
// cold or warm, today or next month.
func Steady(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}
