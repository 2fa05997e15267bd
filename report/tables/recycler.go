package tables

import (
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// recycler is the memory a table's column writers allocate from: arrow-go
// frees a column chunk's buffers (dictionary indices, the dictionary's
// values, encoded pages) as the chunk closes, and the next chunk, of the
// same sizes, takes them back rather than have the Go heap zero fresh
// ones and collect the old. It gives what memory.GoAllocator gives, a
// zeroed buffer of the size asked, 64-byte aligned, whose capacity is
// its length, so arrow-go sees no difference. A table's column writers
// run on one goroutine: it is not safe for concurrent use.
type recycler struct {
	// free holds freed buffers by size class: class c holds buffers of
	// 1<<c bytes.
	free [bits.UintSize][][]byte
	// out maps the first byte of each buffer handed out to the whole
	// buffer of its class.
	out map[*byte][]byte
	// kept is the bytes held in free, at most maxKept.
	kept int
	// poison, for tests, overwrites each freed buffer: a writer that read
	// a buffer after freeing it would then write other bytes.
	poison bool
}

const (
	// minClass is the smallest size class: 64 bytes, so that every
	// buffer (a power of two from the Go heap) is 64-byte aligned.
	minClass = 6
	// maxKept bounds what a table's recycler holds between uses.
	maxKept = 8 << 20
	// maxRecycled is the largest buffer recycled: a larger one, rounded
	// up to a power of two, could waste as much as it holds, and is left
	// to the Go heap.
	maxRecycled = 4 << 20
)

var _ memory.Allocator = (*recycler)(nil)

func newRecycler() *recycler { return &recycler{out: map[*byte][]byte{}} }

func sizeClass(size int) int { return max(minClass, bits.Len(uint(size-1))) }

// Allocate returns a zeroed buffer of size bytes.
func (r *recycler) Allocate(size int) []byte {
	if size <= 0 || size > maxRecycled {
		return memory.DefaultAllocator.Allocate(size)
	}
	c := sizeClass(size)
	var buf []byte
	if n := len(r.free[c]); n > 0 {
		buf = r.free[c][n-1]
		r.free[c] = r.free[c][:n-1]
		r.kept -= len(buf)
		clear(buf[:size])
	} else {
		buf = make([]byte, 1<<c)
		if uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64 != 0 {
			// Not from a power-of-two size class: leave it to the heap.
			return memory.DefaultAllocator.Allocate(size)
		}
	}
	r.out[unsafe.SliceData(buf)] = buf
	return buf[:size:size]
}

// Reallocate returns b resized to size bytes: b itself when it is that
// long or longer, else a new buffer with b's bytes, b being freed.
func (r *recycler) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := r.Allocate(size)
	copy(nb, b)
	r.Free(b)
	return nb
}

// Free takes back a buffer Allocate returned.
func (r *recycler) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	p := unsafe.SliceData(b)
	buf, ok := r.out[p]
	if !ok {
		return
	}
	delete(r.out, p)
	if r.poison {
		for i := range buf {
			buf[i] = 0xcd
		}
	}
	if r.kept+len(buf) > maxKept {
		return
	}
	c := sizeClass(len(buf))
	r.free[c] = append(r.free[c], buf)
	r.kept += len(buf)
}
