package crawl

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
)

// TestNPMStoreShared: two packages with a common dependency hold its
// files as one inode each (fetched once, hard-linked), a second crawl
// with the store kept fetches nothing and gives the same records, and
// evicting the packages empties the store.
func TestNPMStoreShared(t *testing.T) {
	npmtest.NeedSandbox(t)
	dep := map[string]string{"tiny-dep": "1.0.0"}
	url, fetched := npmtest.Registry(t, []npmtest.Package{
		{Name: "tiny-dep", Version: "1.0.0"},
		{Name: "tiny-a", Version: "1.0.0", Prelude: "serve();", Dependencies: dep},
		{Name: "tiny-b", Version: "2.0.0", Prelude: "serve();", Dependencies: dep},
	})
	npmtest.Use(t, url)
	ids := []string{"npm:tiny-a@1.0.0", "npm:tiny-b@2.0.0"}
	cands, err := ParseCandidates(strings.NewReader(strings.Join(ids, "\n")+"\n"), "list")
	if err != nil {
		t.Fatal(err)
	}
	cache := cacheDir(t)
	crawl := func() map[string][]string {
		opt := Options{CandidateList: cands, Out: filepath.Join(t.TempDir(), "out"), AllowPrivate: true, OmitElapsed: true,
			Probe: ProbeOptions{Timeout: crawlTimeout, MaxBytes: 4 << 20}, Packages: PackageOptions{Cache: cache}}
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for id, rec := range readServers(t, opt.Out) {
			if !rec.Reachable {
				t.Fatalf("%s: %s: %s", id, rec.ErrorKind, rec.Error)
			}
			out[id] = rec.tools
		}
		return out
	}
	cold := crawl()
	if fetched.Load() != 3 {
		t.Errorf("cold crawl fetched %d tarballs, want 3 (the dependency once)", fetched.Load())
	}
	var c npmCache
	folder := func(id string) string {
		name, version, _ := strings.Cut(strings.TrimPrefix(id, "npm:"), "@")
		return filepath.Join(cache, c.key(&Package{Identifier: name, Version: version}))
	}
	for _, f := range []string{"node_modules/tiny-dep/server.js", "node_modules/tiny-dep/package.json"} {
		a, errA := os.Stat(filepath.Join(folder(ids[0]), f))
		b, errB := os.Stat(filepath.Join(folder(ids[1]), f))
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			t.Errorf("%s of the two packages: not one inode (%v, %v)", f, errA, errB)
		}
	}
	st, err := openStore(filepath.Join(cache, storeDir))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.Size(); err != nil || n == 0 {
		t.Fatalf("store size %d, %v", n, err)
	}

	warm := crawl()
	if fetched.Load() != 3 {
		t.Errorf("warm crawl fetched %d more tarballs, want none", fetched.Load()-3)
	}
	if !maps.EqualFunc(cold, warm, slices.Equal) || len(cold) != 2 {
		t.Errorf("records differ: cold %v, warm %v", cold, warm)
	}

	c = npmCache{dir: cache, max: 0, store: st}
	c.evict()
	if n, err := st.Size(); err != nil || n != 0 {
		t.Errorf("after evicting every package the store holds %d bytes (%v)", n, err)
	}
	if _, err := os.Stat(folder(ids[0])); err == nil {
		t.Error("a package folder outlived eviction")
	}
}
