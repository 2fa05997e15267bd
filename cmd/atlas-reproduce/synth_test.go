package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSynthScalesServers: --tools alone scales the servers with the
// snapshot's tools per server; --servers given is kept, and checked.
func TestSynthScalesServers(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--tools", "1000"}, 0, "1000 tools on 57 servers"},
		{[]string{"--tools", "10"}, 0, "10 tools on 1 servers"},
		{[]string{"--tools", "1000", "--servers", "3"}, 0, "1000 tools on 3 servers"},
		{[]string{"--tools", "10", "--servers", "11"}, exitUsage, "must be at least --servers"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "data")
			_, stderr, code := run(t, "", append([]string{"synth", "--out", out, "--progress=false"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.code, stderr, tc.want)
			}
		})
	}
}
