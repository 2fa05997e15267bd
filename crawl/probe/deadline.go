package probe

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errProbeDeadline is the cause of a probe's context when its deadline
// passed.
var errProbeDeadline = errors.New("the probe's deadline passed")

// errStepDeadline is the cause of a step's context (see
// withStepDeadline) when the step's share of the deadline passed.
var errStepDeadline = errors.New("the step's share of the deadline passed")

// probeDeadline is a probe's deadline that stands still while the probe
// waits for the memory budget: that wait is the crawl's, not the server's,
// and must not turn a server into a timeout record. A step's deadline
// nested in it (parent) stands still with it, so that how a server is
// recorded never depends on how long other probes held the budget.
type probeDeadline struct {
	mu        sync.Mutex
	timer     *time.Timer
	remaining time.Duration
	since     time.Time
	waiting   int
	parent    *probeDeadline
}

type deadlineKey struct{}

// withProbeDeadline returns a context that ends d after now, not counting
// the time spent between pause and resume, with errProbeDeadline as its
// cause; stop releases it.
func withProbeDeadline(parent context.Context, d time.Duration) (ctx context.Context, stop func()) {
	return withDeadlineCause(parent, d, errProbeDeadline)
}

// withStepDeadline is withProbeDeadline for one step of a probe, with
// errStepDeadline as its cause: pausing the probe's deadline (see
// pauseDeadline) pauses the step's too.
func withStepDeadline(parent context.Context, d time.Duration) (ctx context.Context, stop func()) {
	return withDeadlineCause(parent, d, errStepDeadline)
}

func withDeadlineCause(parent context.Context, d time.Duration, cause error) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	up, _ := parent.Value(deadlineKey{}).(*probeDeadline)
	pd := &probeDeadline{remaining: d, since: time.Now(), parent: up}
	pd.timer = time.AfterFunc(d, func() { cancel(cause) })
	return context.WithValue(ctx, deadlineKey{}, pd), func() {
		pd.timer.Stop()
		cancel(context.Canceled)
	}
}

// deadlinePassed says ctx ended because its probe's deadline passed.
func deadlinePassed(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errProbeDeadline)
}

// pauseDeadline stops the clock of ctx's probe deadline, and of the
// step deadlines nested in it, if it has them, until the returned resume
// is called. Pauses nest: the clock runs again when the last one resumes.
func pauseDeadline(ctx context.Context) (resume func()) {
	var chain []*probeDeadline
	for pd, _ := ctx.Value(deadlineKey{}).(*probeDeadline); pd != nil; pd = pd.parent {
		chain = append(chain, pd)
	}
	for _, pd := range chain {
		pd.pause()
	}
	return func() {
		for _, pd := range chain {
			pd.resume()
		}
	}
}

func (pd *probeDeadline) pause() {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	pd.waiting++
	if pd.waiting == 1 && pd.timer.Stop() {
		pd.remaining -= time.Since(pd.since)
	}
}

func (pd *probeDeadline) resume() {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	pd.waiting--
	if pd.waiting == 0 {
		pd.since = time.Now()
		pd.timer.Reset(max(pd.remaining, 0))
	}
}
