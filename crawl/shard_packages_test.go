package crawl

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// TestShardsOfPackages: a registry of npm packages, a remote and a package
// with no runner, crawled whole and in 3 shards (by the packages'
// coordinates and the remote's URL), merged: the same bytes.
func TestShardsOfPackages(t *testing.T) {
	npmtest.NeedSandbox(t)
	var pkgs []npmtest.Package
	for i := range 5 {
		pkgs = append(pkgs, npmtest.Package{Name: fmt.Sprintf("tiny-shard-%d", i), Version: "1.0.0", Prelude: `serve();`})
	}
	npmURL, _ := npmtest.Registry(t, pkgs)
	npmtest.Use(t, npmURL)
	remote := crawltest.StreamableServer(t, crawltest.GenTools(3, "remote"), 2, false)
	entries := []map[string]any{
		pkgEntry("io.test/remote", []map[string]any{{"type": "streamable-http", "url": remote.URL}}),
		pkgEntry("io.test/py", nil, map[string]any{"registryType": "pypi", "identifier": "tiny-py", "version": "1.0", "runtimeHint": "uvx", "transport": map[string]any{"type": "stdio"}}),
	}
	for _, p := range pkgs {
		entries = append(entries, pkgEntry("io.test/"+p.Name, nil, npmPkg(p.Name, p.Version, nil)))
	}
	reg := crawltest.Serve(t, &standInRegistry{entries: entries, pageSize: 3})
	cands, _, err := FetchRegistry(context.Background(), RegistryOptions{URL: reg.URL})
	if err != nil {
		t.Fatal(err)
	}
	cache := crawltest.CacheDir(t)
	crawlTo := func(sh Shard, conc int) string {
		t.Helper()
		opt := Options{CandidateList: cands, Source: release.Source{Registry: reg.URL}, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
			Shard: sh, Probe: probe.Options{Timeout: crawlTimeout, MaxBytes: 4 << 20},
			Packages: runners.Options{Cache: cache, Concurrency: conc, Limits: sandbox.Limits{Memory: 4 << 30}}}
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatal(err)
		}
		return opt.Out
	}
	whole := crawlTo(Shard{}, 2)
	var shards []string
	for k := range 3 {
		shards = append(shards, crawlTo(Shard{k, 3}, 1+k%2))
	}
	merged := t.TempDir()
	if _, err := Merge(context.Background(), merged, shards); err != nil {
		t.Fatal(err)
	}
	want, got := readAll(t, whole), readAll(t, merged)
	for name, b := range want {
		if name == release.SumsFile {
			b, got[name] = withoutRelease(b), withoutRelease(got[name])
		}
		if !bytes.Equal(b, got[name]) {
			t.Errorf("%s of the merge differs from the whole crawl's", name)
		}
	}
	servers := readServers(t, whole)
	reachable := 0
	for _, s := range servers {
		if s.Reachable {
			reachable++
		}
	}
	if len(servers) != 7 || reachable != 6 {
		t.Errorf("%d servers, %d reachable; want 7 (5 npm packages, a remote, a PyPI package), 6 reachable", len(servers), reachable)
	}
}
