package crawl

import (
	"context"
	"testing"
	"time"
)

// TestProbeDeadlinePauses: the deadline does not pass while paused, and
// passes after the rest of it once resumed, with its own cause.
func TestProbeDeadlinePauses(t *testing.T) {
	ctx, stop := withProbeDeadline(context.Background(), 50*time.Millisecond)
	defer stop()
	resume := pauseDeadline(ctx)
	inner := pauseDeadline(ctx) // pauses nest
	select {
	case <-ctx.Done():
		t.Fatal("the deadline passed while paused")
	case <-time.After(200 * time.Millisecond):
	}
	inner()
	select {
	case <-ctx.Done():
		t.Fatal("the deadline passed while one pause was still held")
	case <-time.After(100 * time.Millisecond):
	}
	resume()
	<-ctx.Done()
	if !deadlinePassed(ctx) {
		t.Errorf("cause %v, want the probe's deadline", context.Cause(ctx))
	}
}

// TestProbeDeadlineStop: stopping a probe is not its deadline passing.
func TestProbeDeadlineStop(t *testing.T) {
	ctx, stop := withProbeDeadline(context.Background(), time.Hour)
	stop()
	<-ctx.Done()
	if deadlinePassed(ctx) {
		t.Error("a stopped probe reads as timed out")
	}
}
