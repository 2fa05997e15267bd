package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestReproduceOfflineHint: when the download fails, reproduce says how to
// run on the files already downloaded, naming the folders given.
func TestReproduceOfflineHint(t *testing.T) {
	zenodo := httptest.NewServer(http.NotFoundHandler())
	defer zenodo.Close()
	dest, out := filepath.Join(t.TempDir(), "zenodo"), filepath.Join(t.TempDir(), "results")
	_, stderr, code := run(t, "", "reproduce", "--dest", dest, "--out", out, "--base-url", zenodo.URL, "--retries", "0", "--progress=false")
	want := "atlas-reproduce run --data " + dest + " --out " + out + " --require-reproduced"
	if code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant a line naming %q", code, stderr, want)
	}
}
