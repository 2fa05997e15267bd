package sensitivity

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// checkCached looks name up in c (n slots) twice, a miss then most likely a
// hit, and requires both answers to equal the uncached rewrites.
func checkCached(t *testing.T, c *nameCache, n int, name []byte) {
	t.Helper()
	var buf, ref []byte
	wc, ww := rewriteLabels(&ref, name)
	for try := range 2 {
		if gc, gw := c.rewrites(&buf, name, n); gc != wc || gw != ww {
			t.Fatalf("%q (lookup %d, %d slots): cached camel %v word %v, uncached camel %v word %v", name, try, n, gc, gw, wc, ww)
		}
	}
}

// TestNameCacheMatchesRewrites holds the cache to the general path on the
// names of the real corpus and on random names, with the run's cache size
// and with caches so small that names keep replacing one another, and on
// names at the cache's length limit.
func TestNameCacheMatchesRewrites(t *testing.T) {
	var names [][]byte
	d := census.NewDecoder()
	for line := range bytes.Lines(realcorpus.MustRead(t)) {
		rec, err := d.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range rec.Tools {
			for _, p := range tool.Properties {
				if needsRewrite(p.Name) {
					names = append(names, bytes.Clone(p.Name))
				}
			}
		}
	}
	if len(names) < 1000 {
		t.Fatalf("only %d real names to rewrite", len(names))
	}
	r := rand.New(rand.NewPCG(7, 11))
	const alphabet = "aZbYcXzAB09_-.é "
	for range 5000 {
		var b []byte
		for range r.IntN(nameCacheMax + 4) {
			b = append(b, alphabet[r.IntN(len(alphabet))])
		}
		names = append(names, b)
	}
	for _, n := range []int{nameCacheMax - 1, nameCacheMax, nameCacheMax + 1} {
		names = append(names, []byte(strings.Repeat("apiKey", n)[:n]), []byte(strings.Repeat("x_", n)[:n]))
	}
	names = append(names, nil, []byte{})
	for _, slots := range []int{1, 2, 16, nameCacheSlots} {
		var c nameCache
		for _, i := range r.Perm(len(names)) {
			checkCached(t, &c, slots, names[i])
		}
		// Again in order, now that the slots hold earlier names.
		for _, name := range names {
			checkCached(t, &c, slots, name)
		}
	}
}

// FuzzNameCache holds the cache to the general path on any two names that
// share one slot.
func FuzzNameCache(f *testing.F) {
	f.Add([]byte("privateKey"), []byte("private_key"))
	f.Add([]byte("HTTPServer"), []byte("webhookURL"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var c nameCache
		for _, name := range [][]byte{a, b, a, b} {
			checkCached(t, &c, 1, name)
		}
	})
}

// TestAnalyzerCacheSizes requires the same answers from an Analyzer whose
// name cache holds one name as from one with the run's cache, over the
// real corpus.
func TestAnalyzerCacheSizes(t *testing.T) {
	small, big := Analyzer{slots: 1}, Analyzer{}
	d := census.NewDecoder()
	n := 0
	for line := range bytes.Lines(realcorpus.MustRead(t)) {
		rec, err := d.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rec.Tools {
			tool := &rec.Tools[i]
			if s, b := small.Tool(tool, 0), big.Tool(tool, 0); s != b {
				t.Fatalf("tool %q: one-slot cache %+v, full cache %+v", tool.Name, s, b)
			}
			n++
		}
	}
	if n != realcorpus.Tools {
		t.Fatalf("%d tools, want %d", n, realcorpus.Tools)
	}
}
