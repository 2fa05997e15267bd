package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zip"
)

// TestMemberNamesReachNoTerminalRaw: a zip whose member names hold a
// terminal escape and a bell is inspected, and refused for holding a file
// twice, without those bytes reaching stdout or stderr.
func TestMemberNamesReachNoTerminalRaw(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, members ...string) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		for _, m := range members {
			w, err := zw.Create(m)
			if err != nil {
				t.Fatal(err)
			}
			gz := gzip.NewWriter(w)
			gz.Write([]byte(`{"server_id": "s", "reachable": true}` + "\n"))
			gz.Close()
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return p
	}
	once := write("once.zip", "x\x1b]0;pwned\x07/servers.jsonl.gz")
	twice := write("twice.zip", "a\x1b[2J/servers.jsonl.gz", "b\x1b[2J/servers.jsonl.gz")
	for _, c := range []struct {
		name, zip string
		code      int
		want      string
	}{
		{"inspect", once, 0, `\x1b]0;pwned\a`},
		{"holds it twice", twice, exitFailure, "holds it twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "", "inspect", "--data", c.zip)
			if code != c.code || strings.ContainsAny(stdout+stderr, "\x1b\x07") || !strings.Contains(stdout+stderr, c.want) {
				t.Errorf("exit %d (want %d), output %q, want %q and no control characters", code, c.code, stdout+stderr, c.want)
			}
		})
	}
}
