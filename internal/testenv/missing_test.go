package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test would end instead of
// ending it.
type recorder struct {
	testing.TB
	ends []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.ends = append(r.ends, "fail: "+fmt.Sprintf(format, args...))
}
func (r *recorder) Skipf(format string, args ...any) {
	r.ends = append(r.ends, "skip: "+fmt.Sprintf(format, args...))
}

// TestMissing: outside CI a missing tool skips the test, saying why; with
// CI=true it fails it. Need ends through the same helper.
func TestMissing(t *testing.T) {
	tests := []struct {
		ci   string
		want string
	}{
		{"", "skip: "},
		{"false", "skip: "},
		{"true", "fail: "},
	}
	for _, tc := range tests {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			for name, end := range map[string]func(r *recorder){
				"Missing": func(r *recorder) { Missing(r, "no %s here", "tool") },
				"Need":    func(r *recorder) { Need(r, "no-such-tool-on-any-path", "a tool") },
			} {
				r := &recorder{}
				end(r)
				if len(r.ends) == 0 || !strings.HasPrefix(r.ends[0], tc.want) {
					t.Errorf("%s ended the test by %q, want %q...", name, r.ends, tc.want)
				}
				if len(r.ends) > 0 && !strings.Contains(r.ends[0], "tool") {
					t.Errorf("%s's %q does not say what is missing", name, r.ends[0])
				}
			}
		})
	}
}
