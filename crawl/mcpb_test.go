package crawl

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestCrawlBundles: an MCPB bundle is fetched from its URL (a same-host
// redirect followed, another host's refused), checked against its
// fileSha256 (a mismatch is recorded and never run), unpacked with no
// entry leaving its folder, and its manifest's server run as the manifest
// says, its declared tools ignored.
func TestCrawlBundles(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	manifest := `{"manifest_version": "0.2", "name": "tiny", "version": "1.0.0",
  "server": {"type": "binary", "entry_point": "server/stdioserver",
    "mcp_config": {"command": "${__dirname}/server/stdioserver", "args": ["from-manifest", "${user_config.level}"], "env": {"MODE": "bundle"}}},
  "user_config": {"level": {"type": "string", "default": "7"}},
  "tools": [{"name": "declared_only", "description": "never trusted"}]}`
	good := crawltest.MakeBundle(t, crawltest.BundleFile{Name: "manifest.json", Body: []byte(manifest)},
		crawltest.BundleFile{Name: "server/stdioserver", Body: crawltest.StdioServer(t), Mode: 0o755},
		crawltest.BundleFile{Name: "server/link", Body: []byte("stdioserver"), Mode: os.ModeSymlink | 0o777})
	evil := crawltest.MakeBundle(t, crawltest.BundleFile{Name: "manifest.json", Body: []byte(manifest)}, crawltest.BundleFile{Name: "../../../../tmp/atlas-bundle-evil", Body: []byte("x")})
	away := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(good) }))
	var served atomic.Int64
	host := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good.mcpb", "/mismatch.mcpb":
			served.Add(1)
			w.Write(good)
		case "/latest.mcpb":
			http.Redirect(w, r, "/good.mcpb", http.StatusFound)
		case "/away.mcpb":
			http.Redirect(w, r, away.URL+"/good.mcpb", http.StatusFound)
		case "/evil.mcpb":
			w.Write(evil)
		default:
			http.NotFound(w, r)
		}
	}))
	bundle := func(p, sum string) *runners.Package {
		return &runners.Package{RegistryType: runners.RegistryMCPB, Identifier: host.URL + p, FileSHA256: sum, Transport: probe.TransportStdio}
	}
	ok := bundle("/latest.mcpb", crawltest.BundleSum(good))
	mismatch := bundle("/mismatch.mcpb", strings.Repeat("0", 64))
	redirected := bundle("/away.mcpb", crawltest.BundleSum(good))
	slip := bundle("/evil.mcpb", crawltest.BundleSum(evil))
	var cands []Candidate
	for _, p := range []*runners.Package{ok, mismatch, redirected, slip} {
		cands = append(cands, Candidate{Package: p, Record: runners.PackageRecord(p, "test", "io.test/"+p.Identifier, "1.0.0")})
	}
	cache := sharedCache(t)
	for run := range 2 {
		opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
			Probe: probe.Options{Timeout: crawlTimeout}, Packages: runners.Options{Cache: cache}}
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatal(err)
		}
		servers := readServers(t, opt.Out)
		s := servers[ok.ID()]
		if !s.Reachable {
			t.Fatalf("run %d: %s: %s: %s", run, ok.ID(), s.ErrorKind, s.Error)
		}
		for _, n := range []string{"echo", "uid_1000", "argv_from-manifest_7", "mode_bundle", "cwd_.bundle"} {
			if !slices.Contains(s.tools, n) {
				t.Errorf("run %d: tools %v lack %s", run, s.tools, n)
			}
		}
		if slices.Contains(s.tools, "declared_only") {
			t.Errorf("the manifest's declared tools were trusted: %v", s.tools)
		}
		if s.Runner == nil || s.Runner.Runner != runners.RegistryMCPB || s.Runner.Resolved != "sha256:"+crawltest.BundleSum(good) {
			t.Errorf("runner %+v", s.Runner)
		}
		for _, tc := range []struct {
			p    *runners.Package
			want string
		}{{mismatch, "fileSha256 mismatch"}, {redirected, "own host only"}, {slip, "escapes the bundle"}} {
			if s := servers[tc.p.ID()]; s.Reachable || s.ErrorKind != probe.KindInstall || !strings.Contains(s.Error, tc.want) {
				t.Errorf("run %d: %s: %s %q, want install with %q", run, tc.p.ID(), s.ErrorKind, s.Error, tc.want)
			}
		}
	}
	if _, err := os.Stat("/tmp/atlas-bundle-evil"); err == nil {
		t.Error("a bundle entry was written outside its folder")
	}
	// The good bundle came once (then from the cache); the mismatched
	// one each time, since it is never kept.
	if n := served.Load(); n != 3 {
		t.Errorf("bundles served %d times, want 3", n)
	}
}

// httpBytes serves b at every path.
type httpBytes []byte

func (b httpBytes) ServeHTTP(w http.ResponseWriter, _ *http.Request) { w.Write(b) }
