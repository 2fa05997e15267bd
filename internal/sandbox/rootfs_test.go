package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostHelper: a host helper runs in an image root through the host's
// loader under HostDir, with the host's library folders; one outside /usr
// is refused, since an image root shows only the host's /usr.
func TestHostHelper(t *testing.T) {
	env, err := filepath.EvalSymlinks("/usr/bin/env")
	if err != nil {
		t.Skip("no /usr/bin/env on this machine")
	}
	argv, err := hostHelper(env)
	if err != nil {
		t.Fatal(err)
	}
	last := argv[len(argv)-1]
	if last != HostDir+env {
		t.Errorf("helper %q, want %s", last, HostDir+env)
	}
	if len(argv) == 4 {
		if !strings.HasPrefix(argv[0], HostDir+"/usr/") || argv[1] != "--library-path" || !strings.HasPrefix(argv[2], HostDir+"/usr/") {
			t.Errorf("loader invocation %q", argv)
		}
		if _, err := os.Stat(strings.TrimPrefix(argv[0], HostDir)); err != nil {
			t.Errorf("the loader %s is not on the host: %v", argv[0], err)
		}
	} else if len(argv) != 1 {
		t.Errorf("argv %q: want the loader, its library path and the helper, or a static helper alone", argv)
	}
	outside := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(outside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := hostHelper(outside); err == nil || !strings.Contains(err.Error(), "not under /usr") {
		t.Errorf("a helper outside /usr: %v", err)
	}
}
