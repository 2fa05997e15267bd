package probe

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestProbeDeadlinePauses: the deadline does not pass while paused, and
// passes after exactly the rest of it once resumed, with its own cause; a
// step's deadline nested in it stands still with it. On the bubble's
// clock, so the instants are exact on any machine.
func TestProbeDeadlinePauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ctx, stop := withProbeDeadline(context.Background(), 50*time.Millisecond)
		defer stop()
		step, stopStep := withStepDeadline(ctx, 40*time.Millisecond)
		defer stopStep()
		time.Sleep(10 * time.Millisecond)
		resume := pauseDeadline(step) // pauses the step's and the probe's
		inner := pauseDeadline(ctx)   // pauses nest
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if ctx.Err() != nil || step.Err() != nil {
			t.Fatal("a deadline passed while paused")
		}
		inner()
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if ctx.Err() != nil || step.Err() != nil {
			t.Fatal("a deadline passed while one pause was still held")
		}
		resume()
		<-step.Done()
		// 10 ms before the pause, 300 ms paused, 30 ms after.
		if got := time.Since(start); got != 340*time.Millisecond {
			t.Errorf("the step's deadline passed at %v, want 340ms", got)
		}
		if deadlinePassed(step) || context.Cause(step) != errStepDeadline {
			t.Errorf("step cause %v, want the step's deadline", context.Cause(step))
		}
		<-ctx.Done()
		if got := time.Since(start); got != 350*time.Millisecond {
			t.Errorf("the probe's deadline passed at %v, want 350ms", got)
		}
		if !deadlinePassed(ctx) {
			t.Errorf("cause %v, want the probe's deadline", context.Cause(ctx))
		}
	})
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
