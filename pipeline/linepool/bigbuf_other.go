//go:build !linux

package linepool

// Where mremap is not available, a long line's buffer is ordinary memory
// grown by copying.

func mapBig(n int) ([]byte, error) { return make([]byte, 0, n), nil }

func remapBig(b []byte, n int) ([]byte, error) {
	nb := make([]byte, len(b), n)
	copy(nb, b)
	return nb, nil
}

func unmapBig([]byte) {}
