// Package freelist keeps values for reuse, a bounded number of them.
//
// A sync.Pool is emptied by the collector (its values survive one
// collection), and a run collects a few times a second: the large buffers
// of a pipeline put in one would be allocated again and again, each new
// one written over afresh, with a page fault every 4 KiB where the heap
// grows. A List keeps them for as long as it lives.
package freelist

// List holds up to a fixed number of values for reuse. It is safe for
// concurrent use.
type List[T any] struct {
	free  chan T
	fresh func() T
}

// New returns a List that keeps up to n values and makes new ones with
// fresh.
func New[T any](n int, fresh func() T) *List[T] {
	return &List[T]{free: make(chan T, n), fresh: fresh}
}

// Get returns a kept value, or a new one.
func (l *List[T]) Get() T {
	select {
	case v := <-l.free:
		return v
	default:
		return l.fresh()
	}
}

// Put keeps v for reuse, unless the List is full: v is then left to the
// collector.
func (l *List[T]) Put(v T) {
	select {
	case l.free <- v:
	default:
	}
}
