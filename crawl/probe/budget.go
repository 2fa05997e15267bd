package probe

import (
	"context"
	"sync"
)

// DefaultMaxMemory is the default budget of response bytes held by all
// probes in flight together.
const DefaultMaxMemory = 1 << 30

// SoftLimitFactor is how far past the budget a crawling process's heap
// may grow before the garbage collector works harder: while an answer is
// decoded its bytes exist in a few copies (read-ahead, the SDK's read and
// decoding, the parsed page, the compacted tools), and the collector lets
// the heap reach twice what is live. A command that crawls sets the Go
// runtime's soft memory limit to this many times the budget (BENCH.md).
const SoftLimitFactor = 4

// Budget holds the response bytes of all probes in flight to one limit: a
// semaphore weighted by bytes, taken as they are read and given back when
// the probe's result is written out. Per-server caps alone let 32 servers
// each sending a tool just under the cap hold 32 times the cap.
//
// Taking bytes as they come can deadlock: every probe holds part of the
// budget and waits for more. So the budget keeps a reserve of one probe's
// cap, which only one waiting probe at a time may draw on: that probe can
// always finish, and when it does, it frees what the others wait for.
type Budget struct {
	mu      sync.Mutex
	general int64 // free bytes any probe may take
	reserve int64 // free bytes of the reserve
	holder  *account
	wake    chan struct{} // closed and replaced whenever bytes are freed
	used    int64
	peak    int64
}

// NewBudget returns a budget of total bytes for probes that read at most
// perProbe bytes each; total must be at least perProbe (a smaller total
// is raised to it, since one probe must always be able to finish).
func NewBudget(total, perProbe int64) *Budget {
	total = max(total, perProbe)
	return &Budget{general: total - perProbe, reserve: perProbe, wake: make(chan struct{})}
}

// Peak is the most bytes held at once so far.
func (b *Budget) Peak() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// account is what one probe attempt holds of a budget. A nil account (no
// budget) takes and frees nothing.
type account struct {
	b        *Budget
	gen, res int64
}

func (b *Budget) newAccount() *account {
	if b == nil {
		return nil
	}
	return &account{b: b}
}

// acquire takes n bytes, waiting while the budget has none to give; it
// says whether they came from the reserve, for giveBack.
func (a *account) acquire(ctx context.Context, n int64) (fromReserve bool, err error) {
	if a == nil || n <= 0 {
		return false, nil
	}
	b := a.b
	for {
		b.mu.Lock()
		switch {
		case b.general >= n:
			b.general -= n
			a.gen += n
		case b.holder == a && b.reserve >= n:
			b.reserve -= n
			a.res += n
			fromReserve = true
		case b.holder == nil:
			b.holder = a
			b.mu.Unlock()
			continue
		default:
			wake := b.wake
			b.mu.Unlock()
			// The wait is the crawl's: the probe's deadline stands still.
			resume := pauseDeadline(ctx)
			select {
			case <-wake:
				resume()
				continue
			case <-ctx.Done():
				resume()
				return false, context.Cause(ctx)
			}
		}
		b.used += n
		b.peak = max(b.peak, b.used)
		b.mu.Unlock()
		return fromReserve, nil
	}
}

// giveBack returns n unused bytes of an acquire.
func (a *account) giveBack(n int64, fromReserve bool) {
	if a == nil || n <= 0 {
		return
	}
	b := a.b
	b.mu.Lock()
	if fromReserve {
		a.res -= n
		b.reserve += n
	} else {
		a.gen -= n
		b.general += n
	}
	b.used -= n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

// release frees everything the account holds.
func (a *account) release() {
	if a == nil {
		return
	}
	b := a.b
	b.mu.Lock()
	b.general += a.gen
	b.reserve += a.res
	b.used -= a.gen + a.res
	a.gen, a.res = 0, 0
	if b.holder == a {
		b.holder = nil
	}
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}
