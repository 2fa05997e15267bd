package crawl

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
)

// bigPages serves pages of distinct servers with a fresh cursor on every
// page, as a hostile or just very large registry may: nothing repeats, so
// only a client whose memory is bounded by a page survives it.
func bigPages(pages, perPage int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		var b strings.Builder
		b.WriteString(`{"servers":[`)
		for i := range perPage {
			if i > 0 {
				b.WriteByte(',')
			}
			n := p*perPage + i
			fmt.Fprintf(&b, `{"server":{"name":"io.big/s%d","version":"1.0.0","description":"%s","remotes":[{"type":"streamable-http","url":"https://s%d.big.example/mcp"}]},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":true}}}`,
				n, strings.Repeat("d", 200), n)
		}
		b.WriteString(`],"metadata":{`)
		if p+1 < pages {
			fmt.Fprintf(&b, `"nextCursor":"%d"`, p+1)
		}
		b.WriteString(`}}`)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, b.String())
	})
}

// TestStreamRegistryToFile: candidates streamed to a CandidatesFile come
// out one per server in listing order, and the file appears only on
// Commit, with no temporary left beside it either way.
func TestStreamRegistryToFile(t *testing.T) {
	ts := crawltest.Serve(t, bigPages(5, 40))
	dir := t.TempDir()
	name := filepath.Join(dir, "c.jsonl")
	for _, commit := range []bool{false, true} {
		cf, err := CreateCandidates(name)
		if err != nil {
			t.Fatal(err)
		}
		st, err := StreamRegistry(context.Background(), RegistryOptions{URL: ts.URL}, cf.Write)
		if err != nil {
			t.Fatal(err)
		}
		if st.Pages != 5 || st.Kept != 200 || cf.Len() != 200 {
			t.Fatalf("stats %+v, %d written", st, cf.Len())
		}
		if commit {
			if err := cf.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		cf.Abort()
		ents, _ := os.ReadDir(dir)
		if (commit && len(ents) != 1) || (!commit && len(ents) != 0) {
			t.Fatalf("commit %v: folder holds %v", commit, ents)
		}
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 200 || !strings.Contains(lines[0], `"name": "io.big/s0"`) || !strings.Contains(lines[199], `"name": "io.big/s199"`) {
		t.Errorf("%d lines, first %s, last %s", len(lines), lines[0], lines[len(lines)-1])
	}
}

// BenchmarkStreamRegistryMemory reads a registry of 40 pages of 5,000
// distinct servers (about 1.6 MB a page, 200,000 servers) with a fresh
// cursor on every page, and reports the peak heap seen while streaming the
// candidates to a file: it stays near a page's worth plus the per-name
// digests, where holding the registry took it past a GB at scale.
//
//	go test ./crawl -run '^$' -bench StreamRegistryMemory -benchtime 1x
func BenchmarkStreamRegistryMemory(b *testing.B) {
	ts := crawltest.Serve(b, bigPages(40, 5000))
	for b.Loop() {
		runtime.GC()
		var peak uint64
		var mu sync.Mutex
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			var ms runtime.MemStats
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					runtime.ReadMemStats(&ms)
					mu.Lock()
					peak = max(peak, ms.HeapInuse)
					mu.Unlock()
				}
			}
		}()
		cf, err := CreateCandidates(filepath.Join(b.TempDir(), "c.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		st, err := StreamRegistry(context.Background(), RegistryOptions{URL: ts.URL}, cf.Write)
		if err != nil {
			b.Fatal(err)
		}
		if err := cf.Commit(); err != nil {
			b.Fatal(err)
		}
		close(stop)
		<-done
		if st.Kept != 200000 {
			b.Fatalf("%d kept", st.Kept)
		}
		b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-heap")
	}
}
