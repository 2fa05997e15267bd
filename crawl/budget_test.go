package crawl

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBudgetNoDeadlock: probes that each take their whole cap in small
// steps, more than the budget holds at once, all finish, and the bytes
// held never pass the budget.
func TestBudgetNoDeadlock(t *testing.T) {
	const perProbe, total, probes = 1000, 2500, 8
	b := NewBudget(total, perProbe)
	var wg sync.WaitGroup
	errs := make(chan error, probes)
	for range probes {
		wg.Go(func() {
			a := b.newAccount()
			defer a.release()
			for range perProbe / 10 {
				if _, err := a.acquire(context.Background(), 10); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if p := b.Peak(); p > total || p < perProbe {
		t.Errorf("peak %d, want between %d and %d", p, perProbe, total)
	}
	if b.general != total-perProbe || b.reserve != perProbe || b.used != 0 || b.holder != nil {
		t.Errorf("budget not whole again: %+v", b)
	}
}

// TestCrawlMemoryBudget: servers each sending one large tool, crawled at
// once under a budget smaller than their sum, are all captured, and the
// bytes held at once stay within the budget.
func TestCrawlMemoryBudget(t *testing.T) {
	const servers, toolBytes = 6, 1 << 20
	var lines []string
	for i := range servers {
		tool := genTools(1, "mem")[0]
		tool.Description = strings.Repeat(string(rune('a'+i)), toolBytes)
		lines = append(lines, streamableServer(t, []testTool{tool}, 0, i%2 == 0).URL)
	}
	probe := ProbeOptions{Timeout: 30 * time.Second, MaxBytes: 2 << 20, AllowAddr: loopback}
	const budget = 3 << 20
	sum, err := Run(context.Background(), Options{Candidates: writeCandidates(t, lines), Out: t.TempDir(),
		Concurrency: servers, Probe: probe, MaxMemory: budget})
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
