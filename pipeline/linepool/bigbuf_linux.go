//go:build linux

package linepool

import "golang.org/x/sys/unix"

// A line longer than a chunk lives in memory mapped outside the Go heap.
// The buffer grows in place (mremap moves pages, it copies nothing, and
// pages never written take no memory), so the line is held once while it
// is read; and it is unmapped the moment its chunk is released, instead of
// waiting for a collection that a heap inflated by the line itself would
// put off (bigInUse counts these bytes). Nothing of a chunk may be kept past its release (see Chunk.Data),
// which is what makes the unmapping safe.

func mapBig(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	return b[:0], nil
}

func remapBig(b []byte, n int) ([]byte, error) {
	nb, err := unix.Mremap(b[:cap(b)], n, unix.MREMAP_MAYMOVE)
	if err != nil {
		return nil, err
	}
	return nb[:len(b)], nil
}

func unmapBig(b []byte) {
	// Munmap fails only on a slice that is not a whole mapping, which
	// newBig and growBig never return.
	_ = unix.Munmap(b[:cap(b)])
}
