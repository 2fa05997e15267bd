package crawl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// TestCrawlMemoryBudget: servers each sending one large tool, crawled at
// once under a budget smaller than their sum, are all captured, and the
// bytes held at once stay within the budget.
func TestCrawlMemoryBudget(t *testing.T) {
	const servers, toolBytes = 6, 1 << 20
	var lines []string
	for i := range servers {
		tool := crawltest.GenTools(1, "mem")[0]
		tool.Description = strings.Repeat(string(rune('a'+i)), toolBytes)
		lines = append(lines, crawltest.StreamableServer(t, []crawltest.Tool{tool}, 0, i%2 == 0).URL)
	}
	popt := probe.Options{Timeout: 30 * time.Second, MaxBytes: 2 << 20, AllowAddr: crawltest.Loopback}
	const budget = 3 << 20
	sum, err := Run(context.Background(), Options{Candidates: writeCandidates(t, lines), Out: t.TempDir(),
		Concurrency: servers, Probe: popt, MaxMemory: budget})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reachable != servers {
		t.Fatalf("%+v", sum)
	}
	if sum.MemoryPeak > budget || sum.MemoryPeak < toolBytes {
		t.Errorf("peak %d bytes held, want between %d and the budget %d", sum.MemoryPeak, toolBytes, budget)
	}
}
