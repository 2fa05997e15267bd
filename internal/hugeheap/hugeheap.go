// Package hugeheap asks the kernel to back the Go heap of a long run with
// transparent huge pages where the kernel gives them only when asked.
//
// A census run fills about a hundred megabytes of heap once: every 4 KiB
// page of it costs a page fault on its first touch, and its random reads
// (the decoder's memory of tool texts, the dictionaries and hash tables of
// the table writers, the name ordinals) miss the TLB at 4 KiB granularity.
// On the virtual machines the project is measured on, a fault costs several
// microseconds and a TLB miss a two-level page walk: backed by 2 MiB pages,
// the real-schema census run takes about a sixth less CPU.
//
// Linux gives huge pages to anonymous memory by the setting in
// /sys/kernel/mm/transparent_hugepage/enabled: always, never, or madvise
// (only to ranges advised MADV_HUGEPAGE, the default of many
// distributions). The Go runtime advises no heap range itself, and each
// growth of the heap maps a fresh range that carries no advice. So Prepare
// grows the heap at once by the room the run will use, as a single
// allocation whose pages are never touched (fresh memory is zero, the
// runtime does not clear it), advises that range, and frees it: the
// runtime's page allocator hands out the lowest free addresses first, so
// the run's heap then lives in the advised range, and the untouched pages
// cost no memory until they are used. The runtime's scavenger already
// works in huge-page units where the kernel uses them.
package hugeheap

import "sync"

// Result says what Prepare did.
type Result struct {
	// Mode is the kernel's setting for anonymous memory (always, madvise
	// or never), or "" where it cannot be read (not Linux, or a kernel
	// without transparent huge pages).
	Mode string
	// Advised is true when Prepare advised a range of the heap: only in
	// mode madvise, where nothing else gives the heap huge pages.
	Advised bool
	// Bytes is the size of the advised range.
	Bytes int64
	// Err is why the advice failed, when it did (the run goes on without).
	Err error
}

var (
	once sync.Once
	done Result
)

// Prepare readies about room bytes of heap for huge pages, once per
// process (later calls return the first call's Result): the heap's ranges
// stay advised for the life of the process. It costs one garbage
// collection of a heap that is still small.
func Prepare(room int64) Result {
	once.Do(func() { done = prepare(room) })
	return done
}
