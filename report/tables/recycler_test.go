package tables

import (
	"testing"
	"unsafe"
)

// TestRecycler holds the recycler to what memory.GoAllocator gives (a
// zeroed, 64-byte aligned buffer whose capacity is its length) and checks
// that it hands a freed buffer out again, zeroed, and never a buffer twice.
func TestRecycler(t *testing.T) {
	for _, size := range []int{1, 63, 64, 65, 1000, 4096, 1<<17 + 3} {
		r := newRecycler()
		check := func(what string, b []byte, want int) {
			t.Helper()
			if len(b) != want || cap(b) != want {
				t.Fatalf("size %d, %s: len %d cap %d, want %d", size, what, len(b), cap(b), want)
			}
			if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64 != 0 {
				t.Fatalf("size %d, %s: not 64-byte aligned", size, what)
			}
			for i, x := range b {
				if x != 0 {
					t.Fatalf("size %d, %s: byte %d is %#x, want 0", size, what, i, x)
				}
			}
		}
		a := r.Allocate(size)
		check("first", a, size)
		for i := range a {
			a[i] = 0xaa
		}
		r.Free(a)
		r.Free(a) // a second free is ignored
		b := r.Allocate(size)
		check("reused", b, size)
		if unsafe.SliceData(b) != unsafe.SliceData(a) {
			t.Errorf("size %d: a freed buffer of the same size is not reused", size)
		}
		if c := r.Allocate(size); unsafe.SliceData(c) == unsafe.SliceData(b) {
			t.Fatalf("size %d: a buffer in use handed out again", size)
		}

		// Growing copies and zeroes the rest; shrinking keeps the buffer.
		for i := range b {
			b[i] = byte(i)
		}
		g := r.Reallocate(2*size+1, b)
		if len(g) != 2*size+1 {
			t.Fatalf("size %d: Reallocate to %d gives %d bytes", size, 2*size+1, len(g))
		}
		for i, x := range g {
			want := byte(0)
			if i < size {
				want = byte(i)
			}
			if x != want {
				t.Fatalf("size %d: grown byte %d is %#x, want %#x", size, i, x, want)
			}
		}
		if s := r.Reallocate(size/2, g); unsafe.SliceData(s) != unsafe.SliceData(g) || len(s) != size/2 {
			t.Errorf("size %d: shrinking moved the buffer or gave %d bytes", size, len(s))
		}
		// b went back to the recycler when it grew.
		if d := r.Allocate(size); unsafe.SliceData(d) != unsafe.SliceData(b) {
			t.Errorf("size %d: the buffer a Reallocate left is not reused", size)
		}
	}
}

// TestRecyclerIgnoresForeignBuffers: a buffer the recycler did not hand
// out, or a slice of one past its start, is not taken back.
func TestRecyclerIgnoresForeignBuffers(t *testing.T) {
	r := newRecycler()
	foreign := make([]byte, 128)
	r.Free(foreign)
	a := r.Allocate(128)
	r.Free(a[64:])
	for _, b := range [][]byte{r.Allocate(128), r.Allocate(128)} {
		if p := unsafe.SliceData(b); p == unsafe.SliceData(foreign) || p == unsafe.SliceData(a) {
			t.Fatal("a buffer freed as a foreign or partial slice was handed out")
		}
	}
}

// TestRecyclerLargeBuffers: a buffer over maxRecycled comes from the Go
// heap, at its size, and is not kept when freed.
func TestRecyclerLargeBuffers(t *testing.T) {
	r := newRecycler()
	b := r.Allocate(maxRecycled + 1)
	if len(b) != maxRecycled+1 || cap(b) != maxRecycled+1 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64 != 0 {
		t.Fatalf("len %d cap %d, want %d, 64-byte aligned", len(b), cap(b), maxRecycled+1)
	}
	r.Free(b)
	if r.kept != 0 || len(r.out) != 0 {
		t.Errorf("a large buffer is tracked: %d bytes kept, %d out", r.kept, len(r.out))
	}
}

// TestRecyclerBound: what the recycler keeps between uses stays within
// maxKept.
func TestRecyclerBound(t *testing.T) {
	r := newRecycler()
	var bufs [][]byte
	for range 2 * maxKept / (1 << 20) {
		bufs = append(bufs, r.Allocate(1<<20))
	}
	for _, b := range bufs {
		r.Free(b)
	}
	if r.kept > maxKept || r.kept < maxKept/2 {
		t.Errorf("recycler keeps %d bytes, want at most %d (and most of it)", r.kept, maxKept)
	}
	if len(r.out) != 0 {
		t.Errorf("%d buffers still counted as handed out", len(r.out))
	}
}
