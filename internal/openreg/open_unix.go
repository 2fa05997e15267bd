//go:build unix

package openreg

import (
	"os"
	"syscall"
)

// openNonblock opens with O_NONBLOCK, so that a FIFO without a writer does
// not block open(2); for a regular file the flag changes nothing.
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
