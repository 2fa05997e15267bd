package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCrawlShardsThenMerge: crawl --shard 0/2 and 1/2 of a list, at other
// concurrencies, and merge give the data files of one crawl of the whole
// list; a bad --shard and a merge of one shard of two are refused.
func TestCrawlShardsThenMerge(t *testing.T) {
	dir := t.TempDir()
	var urls []string
	for i := range 5 {
		urls = append(urls, mcpServer(t, 2+i))
	}
	cands := filepath.Join(dir, "candidates.txt")
	if err := os.WriteFile(cands, []byte(strings.Join(urls, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	crawl := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"crawl", "--candidates", cands, "--out", out, "--timeout", "20s", "--allow-private", "--no-elapsed", "--progress=false"}, extra...)
		if _, stderr, code := run(t, "", args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s", extra, code, stderr)
		}
	}
	whole, s0, s1, merged := filepath.Join(dir, "whole"), filepath.Join(dir, "s0"), filepath.Join(dir, "s1"), filepath.Join(dir, "merged")
	crawl(whole)
	crawl(s0, "--shard", "0/2", "--concurrency", "1")
	crawl(s1, "--shard", "1/2", "--concurrency", "7", "--per-host", "1")
	if _, stderr, code := run(t, "", "merge", "--out", merged, s1, s0); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	for _, f := range []string{"servers.jsonl.gz", "server_tools.jsonl.gz", "candidates_remotes.jsonl"} {
		a, err := os.ReadFile(filepath.Join(whole, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(merged, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s of the merge differs from the whole crawl's", f)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"crawl", "--candidates", cands, "--out", filepath.Join(dir, "bad"), "--shard", "2/2"}, exitUsage, "0 <= K < N"},
		{[]string{"merge", "--out", filepath.Join(dir, "half"), s0}, exitFailure, "shard 1/2 missing"},
		{[]string{"merge", s0, s1}, exitUsage, "--out"},
	} {
		if _, stderr, code := run(t, "", tc.args...); code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d naming %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}
