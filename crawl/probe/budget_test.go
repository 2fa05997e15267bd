package probe

import (
	"context"
	"sync"
	"testing"
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
