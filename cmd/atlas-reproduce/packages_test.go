package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
)

// TestScanAndCrawlPackage: scan takes a package coordinate and runs it in
// the sandbox; crawl takes a candidates file of coordinates, and its
// release runs through run.
func TestScanAndCrawlPackage(t *testing.T) {
	npmtest.NeedSandbox(t)
	url, _ := npmtest.Registry(t, []npmtest.Package{
		{Name: "@tiny/scan", Version: "2.0.0", Prelude: "serve();"},
		{Name: "tiny-exit", Version: "1.0.0", Prelude: "process.exit(2);"},
	})
	npmtest.Use(t, url)
	// PyPI has a runner: its index is a closed loopback port, so the
	// scan fails at install and reaches nothing outside.
	t.Setenv("PIP_INDEX_URL", "http://127.0.0.1:1/simple")
	dir := t.TempDir()
	// Run as root, the sandbox is uid 65534, which must pass the folders
	// above the cache (the test's are 0700).
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(dir, "cache")
	stdout, stderr, code := run(t, "", "scan", "--package-cache", cache, "npm:@tiny/scan@2.0.0")
	if code != 0 {
		t.Fatalf("scan: exit %d\n%s", code, stderr)
	}
	if n := strings.Count(stdout, "\n"); n != 3 || !strings.Contains(stdout, `"gg:filesystem-path"`) || !strings.Contains(stderr, "over stdio") {
		t.Errorf("scan: %d lines\n%s\n%s", n, stdout, stderr)
	}
	for _, c := range []struct {
		target string
		code   int
		msg    string
	}{
		{"npm:tiny-exit@1.0.0", exitFailure, "unreachable (exited)"},
		{"pypi:tiny@1.0", exitFailure, "unreachable (install)"},
		{"nuget:Tiny@1.0", exitFailure, "unreachable (no_runtime)"},
		{"npm:tiny-exit", exitUsage, "exact version"},
	} {
		_, stderr, code := run(t, "", "scan", "--package-cache", cache, c.target)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("scan %s: exit %d, want %d with %q\n%s", c.target, code, c.code, c.msg, stderr)
		}
	}

	cands := filepath.Join(dir, "candidates.txt")
	if err := os.WriteFile(cands, []byte("npm:@tiny/scan@2.0.0\nnpm:tiny-exit@1.0.0\nnuget:Tiny@1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	release := filepath.Join(dir, "release")
	if _, stderr, code := run(t, "", "crawl", "--candidates", cands, "--out", release, "--package-cache", cache, "--package-concurrency", "1"); code != 0 {
		t.Fatalf("crawl: exit %d\n%s", code, stderr)
	}
	res := filepath.Join(dir, "res")
	if _, stderr, code := run(t, "", "run", "--data", release, "--sha256sums", filepath.Join(release, "SHA256SUMS"), "--out", res); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(res, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Tools, Servers int
		Release        struct {
			Counts struct {
				UnreachableByKind map[string]int `json:"unreachable_by_kind"`
			} `json:"counts"`
		} `json:"release"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if k := rep.Release.Counts.UnreachableByKind; rep.Tools != 3 || rep.Servers != 1 || k["exited"] != 1 || k["no_runtime"] != 1 {
		t.Errorf("report: %+v, want 3 tools on 1 server, 1 exited, 1 no_runtime", rep)
	}
}
