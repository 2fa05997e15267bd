// Package reclaim returns freed memory to the operating system after a
// burst, on a goroutine of its own and at most once per interval. The Go
// runtime gives freed memory back only gradually: after a burst of large
// request bodies a server would keep its peak for minutes. Library packages
// never call debug.FreeOSMemory themselves (it collects garbage with the
// world stopped); they take a func() to call when a burst ends, and the
// commands that serve opt in by passing a Reclaimer's Request.
package reclaim

import (
	"runtime/debug"
	"sync"
	"time"
)

// Reclaimer runs debug.FreeOSMemory when asked, on its own goroutine,
// leaving at least its interval between two runs.
type Reclaimer struct {
	req  chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
	free func()
}

// Start starts a Reclaimer that leaves at least every between two
// reclaims. Stop ends it.
func Start(every time.Duration) *Reclaimer {
	return start(every, debug.FreeOSMemory)
}

func start(every time.Duration, free func()) *Reclaimer {
	r := &Reclaimer{req: make(chan struct{}, 1), done: make(chan struct{}), free: free}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			select {
			case <-r.done:
				return
			case <-r.req:
			}
			r.free()
			select {
			case <-r.done:
				return
			case <-time.After(every):
			}
		}
	}()
	return r
}

// Request asks for a reclaim without waiting for it: requests made while
// one is pending, or within the interval after the last, come to one.
func (r *Reclaimer) Request() {
	select {
	case r.req <- struct{}{}:
	default:
	}
}

// Stop ends the Reclaimer's goroutine and waits for it; a pending request
// may be dropped.
func (r *Reclaimer) Stop() {
	close(r.done)
	r.wg.Wait()
}
