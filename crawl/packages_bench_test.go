package crawl

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
)

// BenchmarkCrawlPackages crawls 20 tiny npm servers (the test servers, no
// dependencies) from the loopback npm registry at the default package
// concurrency: cold, each iteration with an empty cache (npm install and
// run), and warm, with every package installed (run only). It reports
// packages probed per minute, the cache's bytes per package, and the peak
// RSS of the test process (crawl, registry and harness) and of its largest
// child (npm, node or bwrap). (The CPU time of the sandboxes is not in
// this process's rusage: the processes of a PID namespace are reaped
// inside it. BENCH.md measures it with a cpuacct cgroup.)
func BenchmarkCrawlPackages(b *testing.B) {
	npmtest.NeedSandbox(b)
	const n = 20
	var pkgs []npmtest.Package
	var cands []Candidate
	for i := range n {
		p := npmtest.Package{Name: fmt.Sprintf("tiny-bench-%02d", i), Version: "1.0.0", Prelude: "serve();"}
		pkgs = append(pkgs, p)
		cands = append(cands, Candidate{Line: i + 1, Package: &runners.Package{RegistryType: runners.RegistryNPM, Identifier: p.Name, Version: p.Version, Transport: probe.TransportStdio},
			Record: []byte(fmt.Sprintf(`{"package": "npm:%s@1.0.0"}`, p.Name))})
	}
	url, _ := npmtest.Registry(b, pkgs)
	npmtest.Use(b, url)
	crawlOnce := func(b *testing.B, cache string) {
		sum, err := Run(context.Background(), Options{CandidateList: cands, Out: b.TempDir(), OmitElapsed: true,
			Probe: probe.Options{Timeout: time.Minute}, Packages: runners.Options{Cache: cache}})
		if err != nil || sum.Reachable != n {
			b.Fatalf("%+v %v", sum, err)
		}
	}
	report := func(b *testing.B, cache string) {
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Minutes(), "packages/min")
		size, _ := treeSize(cache)
		b.ReportMetric(float64(size)/n, "cache-B/package")
		var self, children syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		b.ReportMetric(float64(self.Maxrss)/1024, "peak-RSS-MiB")
		b.ReportMetric(float64(children.Maxrss)/1024, "child-peak-RSS-MiB")
	}
	b.Run("cold", func(b *testing.B) {
		var cache string
		for b.Loop() {
			cache = crawltest.CacheDir(b)
			crawlOnce(b, cache)
		}
		report(b, cache)
	})
	b.Run("warm", func(b *testing.B) {
		cache := crawltest.CacheDir(b)
		crawlOnce(b, cache)
		for b.Loop() {
			crawlOnce(b, cache)
		}
		report(b, cache)
	})
}

// treeSize is the bytes of the entries under dir (folders' own size
// included, as the cache counts them), for a benchmark's report.
func treeSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n, err
}
