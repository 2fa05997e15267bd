//go:build !unix

package openreg

import "os"

// openNonblock checks the type before opening where O_NONBLOCK is not
// available; the window between the two is the platform's limit.
func openNonblock(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return os.Open(path)
}
