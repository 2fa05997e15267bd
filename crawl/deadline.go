package crawl

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errProbeDeadline is the cause of a probe's context when its deadline
// passed.
var errProbeDeadline = errors.New("the probe's deadline passed")

// probeDeadline is a probe's deadline that stands still while the probe
// waits for the memory budget: that wait is the crawl's, not the server's,
// and must not turn a server into a timeout record.
type probeDeadline struct {
	mu        sync.Mutex
	timer     *time.Timer
	remaining time.Duration
	since     time.Time
	waiting   int
}

type deadlineKey struct{}

// withProbeDeadline returns a context that ends d after now, not counting
// the time spent between pause and resume, with errProbeDeadline as its
// cause; stop releases it.
func withProbeDeadline(parent context.Context, d time.Duration) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	pd := &probeDeadline{remaining: d, since: time.Now()}
	pd.timer = time.AfterFunc(d, func() { cancel(errProbeDeadline) })
	return context.WithValue(ctx, deadlineKey{}, pd), func() {
		pd.timer.Stop()
		cancel(context.Canceled)
	}
}

// deadlinePassed says ctx ended because its probe's deadline passed.
func deadlinePassed(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errProbeDeadline)
}

// pauseDeadline stops the clock of ctx's probe deadline, if it has one,
// until the returned resume is called. Pauses nest: the clock runs again
// when the last one resumes.
func pauseDeadline(ctx context.Context) (resume func()) {
	pd, _ := ctx.Value(deadlineKey{}).(*probeDeadline)
	if pd == nil {
		return func() {}
	}
	pd.mu.Lock()
	pd.waiting++
	if pd.waiting == 1 && pd.timer.Stop() {
		pd.remaining -= time.Since(pd.since)
	}
	pd.mu.Unlock()
	return func() {
		pd.mu.Lock()
		defer pd.mu.Unlock()
		pd.waiting--
		if pd.waiting == 0 {
			pd.since = time.Now()
			pd.timer.Reset(max(pd.remaining, 0))
		}
	}
}
