package runners

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"

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
	cache := crawltest.CacheDir(t)
	crawl := func() map[string][]string {
		// One install at a time (one Set probes its packages in turn):
		// two npm processes resolving the common dependency at once may
		// each fetch it before either has it in the shared download cache.
		got := runAll(t, Options{Cache: cache, Concurrency: 1}, crawlTimeout, 4<<20, ids...)
		out := map[string][]string{}
		for id, rec := range got {
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

	// The cache's size counts a shared file once: a bound of the store's
	// bytes plus the folders' own keeps both packages, though their
	// folders' files add up to more; a byte less evicts the older alone.
	storeBytes, _ := st.Size()
	var apparent, own int64
	for _, id := range ids {
		a, _, err := dirSizes(folder(id))
		if err != nil {
			t.Fatal(err)
		}
		var mark struct{ Own int64 }
		b, err := os.ReadFile(filepath.Join(folder(id), completeFile))
		if err != nil || json.Unmarshal(b, &mark) != nil {
			t.Fatalf("%s: %v %s", completeFile, err, b)
		}
		apparent, own = apparent+a, own+mark.Own
	}
	if apparent <= storeBytes+own {
		t.Fatalf("the folders' files (%d bytes) share nothing beyond the store's %d and their own %d: the test proves nothing", apparent, storeBytes, own)
	}
	older, newer := folder(ids[0]), folder(ids[1])
	for i, f := range []string{older, newer} {
		when := time.Unix(int64(1000+i), 0)
		_ = os.Chtimes(filepath.Join(f, completeFile), when, when)
	}
	for _, tc := range []struct {
		max  int64
		left []string
	}{{storeBytes + own, []string{older, newer}}, {storeBytes + own - 1, []string{newer}}} {
		c = npmCache{dir: cache, max: tc.max, store: st, storeBytes: storeBytes}
		c.evict()
		for _, f := range []string{older, newer} {
			_, err := os.Stat(f)
			if kept := slices.Contains(tc.left, f); kept != (err == nil) {
				t.Errorf("bound %d: %s kept %v, want %v", tc.max, filepath.Base(f), err == nil, kept)
			}
		}
		if n, _ := st.Size(); n != c.storeBytes {
			t.Errorf("bound %d: the store holds %d bytes, the cache counts %d", tc.max, n, c.storeBytes)
		}
		storeBytes = c.storeBytes
	}

	c = npmCache{dir: cache, max: 0, store: st, storeBytes: storeBytes}
	c.evict()
	if n, err := st.Size(); err != nil || n != 0 {
		t.Errorf("after evicting every package the store holds %d bytes (%v)", n, err)
	}
	if _, err := os.Stat(folder(ids[0])); err == nil {
		t.Error("a package folder outlived eviction")
	}
}

// TestNPMPackumentsOnceACrawl: a crawl fetches a packument once however
// many of its installs need it (the loopback registry, like this
// machine's, sends no caching headers, so npm alone would fetch it again
// for each), and the next crawl fetches it anew: a version published in
// between is what the next crawl installs; unless the packument is
// younger than the crawl's MetadataMaxAge.
func TestNPMPackumentsOnceACrawl(t *testing.T) {
	npmtest.NeedSandbox(t)
	dep := map[string]string{"tiny-dep": "^1.0.0"}
	reg := npmtest.NewRegistry(t, []npmtest.Package{
		{Name: "tiny-dep", Version: "1.0.0"},
		{Name: "tiny-a", Version: "1.0.0", Prelude: "serve();", Dependencies: dep},
		{Name: "tiny-b", Version: "2.0.0", Prelude: "serve();", Dependencies: dep},
		{Name: "tiny-c", Version: "3.0.0", Prelude: "serve();", Dependencies: dep},
		{Name: "tiny-d", Version: "4.0.0", Prelude: "serve();", Dependencies: dep},
	}, nil)
	npmtest.Use(t, reg.URL)
	cache := crawltest.CacheDir(t)
	crawl := func(maxAge time.Duration, ids ...string) {
		t.Helper()
		for id, rec := range runAll(t, Options{Cache: cache, Concurrency: 1, MetadataMaxAge: maxAge}, crawlTimeout, 4<<20, ids...) {
			if !rec.Reachable {
				t.Fatalf("%s: %s: %s", id, rec.ErrorKind, rec.Error)
			}
		}
	}
	depVersion := func(name, version string) string {
		t.Helper()
		var c npmCache
		b, err := os.ReadFile(filepath.Join(cache, c.key(&Package{Identifier: name, Version: version}), "node_modules/tiny-dep/package.json"))
		var pj struct{ Version string }
		if err != nil || json.Unmarshal(b, &pj) != nil {
			t.Fatalf("%s's tiny-dep: %v %s", name, err, b)
		}
		return pj.Version
	}

	crawl(0, "npm:tiny-a@1.0.0", "npm:tiny-b@2.0.0")
	if n := reg.Packuments("tiny-dep"); n != 1 {
		t.Errorf("a crawl of two packages needing tiny-dep fetched its packument %d times, want 1", n)
	}
	reg.Publish(npmtest.Package{Name: "tiny-dep", Version: "1.1.0"})
	crawl(time.Hour, "npm:tiny-c@3.0.0")
	if n := reg.Packuments("tiny-dep"); n != 1 {
		t.Errorf("a crawl that may start with an hour-old packument fetched tiny-dep's again (%d)", n)
	}
	crawl(0, "npm:tiny-d@4.0.0")
	if n := reg.Packuments("tiny-dep"); n != 2 {
		t.Errorf("the next crawl fetched tiny-dep's packument %d more times, want 1", n-1)
	}
	got := []string{depVersion("tiny-a", "1.0.0"), depVersion("tiny-c", "3.0.0"), depVersion("tiny-d", "4.0.0")}
	if want := []string{"1.0.0", "1.0.0", "1.1.0"}; !slices.Equal(got, want) {
		t.Errorf("tiny-dep installed by the three crawls: %v, want %v", got, want)
	}
	if n := reg.Tarballs.Load(); n != 6 {
		t.Errorf("%d tarballs fetched, want 6 (each version once)", n)
	}
}
