package crawl

import (
	"context"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ocitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/pypitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// BenchmarkRunners crawls one server of each type with a runner of its
// own (PyPI, OCI, MCPB) from loopback: cold, each iteration with an empty
// cache (install, then run), and warm, installed (run only). It reports
// seconds per server, the cache's bytes for the package, and the peak RSS
// of the largest child process (pip, python, the server or bwrap).
func BenchmarkRunners(b *testing.B) {
	testenv.Need(b, "bwrap", "the sandbox of packaged servers")
	testenv.Need(b, "python3", "the runtime of PyPI packages")
	ix := pypitest.Serve(b, pypitest.Dist{Project: "tiny-mcp-server", Version: "1.0", Files: map[string]string{"tiny_server/__init__.py": pyServer},
		ConsoleScripts: map[string]string{"tiny-mcp-server": "tiny_server:main"}})
	b.Setenv("PIP_INDEX_URL", ix.URL)
	reg := ocitest.NewRegistry(b, "anonymous")
	reg.Push(b, "acme/server", "1.0", ocitest.Image(b, v1.Config{Entrypoint: []string{"/bin/server"}},
		ocitest.Layer(b, ocitest.Entry{Name: "bin/server", Body: crawltest.StdioServer(b), Mode: 0o755})))
	bundle := crawltest.MakeBundle(b, crawltest.BundleFile{Name: "manifest.json", Body: []byte(`{"server": {"type": "binary", "entry_point": "server/s"}}`)},
		crawltest.BundleFile{Name: "server/s", Body: crawltest.StdioServer(b), Mode: 0o755})
	host := crawltest.Serve(b, httpBytes(bundle))
	for _, p := range []*runners.Package{
		{RegistryType: runners.RegistryPyPI, Identifier: "tiny-mcp-server", Version: "1.0", Transport: probe.TransportStdio},
		{RegistryType: runners.RegistryOCI, Identifier: reg.Host + "/acme/server:1.0", Transport: probe.TransportStdio},
		{RegistryType: runners.RegistryMCPB, Identifier: host.URL + "/s.mcpb", FileSHA256: crawltest.BundleSum(bundle), Transport: probe.TransportStdio},
	} {
		cands := []Candidate{{Line: 1, Package: p, Record: runners.PackageRecord(p, "bench", "io.bench/x", "1.0.0")}}
		crawlOnce := func(b *testing.B, cache string) {
			sum, err := Run(context.Background(), Options{CandidateList: cands, Out: b.TempDir(), OmitElapsed: true, AllowPrivate: true,
				Probe: probe.Options{Timeout: time.Minute}, Packages: runners.Options{Cache: cache}})
			if err != nil || sum.Reachable != 1 {
				b.Fatalf("%+v %v", sum, err)
			}
		}
		report := func(b *testing.B, cache string) {
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/server")
			size, _ := treeSize(cache)
			b.ReportMetric(float64(size), "cache-B")
			var children syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
			b.ReportMetric(float64(children.Maxrss)/1024, "child-peak-RSS-MiB")
		}
		b.Run(p.RegistryType+"/cold", func(b *testing.B) {
			var cache string
			for b.Loop() {
				cache = sharedCache(b)
				crawlOnce(b, cache)
			}
			report(b, cache)
		})
		b.Run(p.RegistryType+"/warm", func(b *testing.B) {
			cache := sharedCache(b)
			crawlOnce(b, cache)
			for b.Loop() {
				crawlOnce(b, cache)
			}
			report(b, cache)
		})
	}
}
