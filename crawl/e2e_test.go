package crawl

import (
	"context"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ocitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/pypitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
)

// TestCrawlWholeRegistry: a registry of a remote and of npm, PyPI, OCI,
// MCPB and NuGet entries, in the shapes the registry publishes (OCI with
// its tag in the identifier, MCPB without a version), crawls into a
// release whose run counts every tool exactly, and whose release.json
// counts the servers by type and outcome.
func TestCrawlWholeRegistry(t *testing.T) {
	npmtest.NeedSandbox(t)
	testenv.Need(t, "python3", "the runtime of PyPI packages")
	npmURL, _ := npmtest.Registry(t, []npmtest.Package{{Name: "@tiny/good", Version: "1.0.0", Prelude: `serve();`}})
	npmtest.Use(t, npmURL)
	ix := pypitest.Serve(t,
		pypitest.Dist{Project: "tiny-mcp-server", Version: "1.0", Files: map[string]string{"tiny_server/__init__.py": pyServer},
			ConsoleScripts: map[string]string{"tiny-mcp-server": "tiny_server:main"}, Requires: []string{"tiny-dep==1.0"}},
		pypitest.Dist{Project: "tiny-dep", Version: "1.0", Files: map[string]string{"tiny_dep/__init__.py": `VALUE = "dep"` + "\n"}})
	t.Setenv("PIP_INDEX_URL", ix.URL)
	reg := ocitest.NewRegistry(t, "anonymous")
	reg.Push(t, "acme/server", "1.0", ocitest.Image(t, v1.Config{Entrypoint: []string{"/bin/server"}, Env: []string{"PATH=/bin"}},
		ocitest.Layer(t, ocitest.Entry{Name: "bin/server", Body: crawltest.StdioServer(t), Mode: 0o755})))
	manifest := `{"manifest_version": "0.2", "name": "tiny", "version": "1.0.0", "server": {"type": "binary", "entry_point": "server/stdioserver"}}`
	bundle := crawltest.MakeBundle(t, crawltest.BundleFile{Name: "manifest.json", Body: []byte(manifest)}, crawltest.BundleFile{Name: "server/stdioserver", Body: crawltest.StdioServer(t), Mode: 0o755})
	host := crawltest.Serve(t, httpBytes(bundle))
	remote := crawltest.StreamableServer(t, crawltest.GenTools(3, "remote"), 2, false)

	stdio := map[string]any{"type": "stdio"}
	entries := []map[string]any{
		pkgEntry("io.test/remote", []map[string]any{{"type": "streamable-http", "url": remote.URL}}),
		pkgEntry("io.test/npm", nil, npmPkg("@tiny/good", "1.0.0", nil)),
		pkgEntry("io.test/pypi", nil, map[string]any{"registryType": "pypi", "identifier": "tiny-mcp-server", "version": "1.0", "runtimeHint": "uvx", "transport": stdio}),
		pkgEntry("io.test/oci", nil, map[string]any{"registryType": "oci", "identifier": reg.Host + "/acme/server:1.0", "transport": stdio}),
		pkgEntry("io.test/mcpb", nil, map[string]any{"registryType": "mcpb", "identifier": host.URL + "/tiny.mcpb", "fileSha256": crawltest.BundleSum(bundle), "transport": stdio}),
		pkgEntry("io.test/nuget", nil, map[string]any{"registryType": "nuget", "identifier": "Tiny.Server", "version": "1.0.0", "transport": stdio}),
	}
	regSrv := crawltest.Serve(t, &standInRegistry{entries: entries, pageSize: 4})
	cands, _, err := FetchRegistry(context.Background(), RegistryOptions{URL: regSrv.URL, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 6 {
		t.Fatalf("%d candidates, want 6", len(cands))
	}
	opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
		Probe: probe.Options{Timeout: crawlTimeout}, Packages: runners.Options{Cache: sharedCache(t)}}
	sum, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reachable != 5 {
		for id, s := range readServers(t, opt.Out) {
			t.Logf("%s: reachable %v %s %s", id, s.Reachable, s.ErrorKind, s.Error)
		}
		t.Fatalf("%d reachable, want 5", sum.Reachable)
	}
	m, err := hashverify.ReadSHA256Sums(filepath.Join(opt.Out, release.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.Run(context.Background(), pipeline.Options{Data: opt.Out, Out: t.TempDir(), Manifest: m, ManifestName: release.SumsFile})
	if err != nil {
		t.Fatal(err)
	}
	// remote 3, npm 3, PyPI echo + 5 notes, OCI and MCPB echo + 6 notes.
	if want := int64(3 + 3 + 6 + 7 + 7); !rep.Verified || rep.Servers != 5 || rep.Tools != want {
		t.Errorf("run: verified %v, %d servers, %d tools; want 5 servers, %d tools", rep.Verified, rep.Servers, rep.Tools, want)
	}
	want := []release.PackageTypeCount{
		{Type: "mcpb", Outcome: "reachable", Servers: 1}, {Type: "npm", Outcome: "reachable", Servers: 1},
		{Type: "nuget", Outcome: "no_runtime", Servers: 1}, {Type: "oci", Outcome: "reachable", Servers: 1},
		{Type: "pypi", Outcome: "reachable", Servers: 1}, {Type: "remote", Outcome: "reachable", Servers: 1},
	}
	got := rep.Release.Counts.ByPackageType
	if len(got) != len(want) {
		t.Fatalf("by package type %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("by package type %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
