package freelist

import (
	"runtime"
	"sync"
	"testing"
)

// TestKeepsAcrossCollections: values put back are given again, the same
// ones, after collections, and no more than n are kept.
func TestKeepsAcrossCollections(t *testing.T) {
	made := 0
	l := New(2, func() *[]byte { made++; b := make([]byte, 0, 64); return &b })
	a, b, c := l.Get(), l.Get(), l.Get()
	if made != 3 {
		t.Fatalf("made %d values for three Gets from an empty list", made)
	}
	l.Put(a)
	l.Put(b)
	l.Put(c) // beyond the bound: dropped
	runtime.GC()
	runtime.GC()
	got := map[*[]byte]bool{l.Get(): true, l.Get(): true}
	if !got[a] || !got[b] || made != 3 {
		t.Fatalf("after two collections the kept values were not given back (made %d)", made)
	}
	if l.Get(); made != 4 {
		t.Fatalf("a Get from an emptied list made no new value (made %d)", made)
	}
}

// TestConcurrent runs Gets and Puts from many goroutines (for the race
// detector).
func TestConcurrent(t *testing.T) {
	l := New(4, func() *int { return new(int) })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				v := l.Get()
				*v++
				l.Put(v)
			}
		})
	}
	wg.Wait()
}
