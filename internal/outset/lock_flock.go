//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package outset

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// acquire takes the folder's lock with flock(2): the kernel drops it when its
// holder dies, so a killed writer never blocks the next one, and a live one
// is reported at once (LOCK_NB) instead of waited for.
func acquire(dir string) (*lockFile, error) {
	path := lockPath(dir)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
		if err != nil {
			return nil, fmt.Errorf("output folder %s: lock: %w", dir, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			defer f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				data, _ := io.ReadAll(io.LimitReader(f, 4096))
				return nil, readHolder(dir, data)
			}
			return nil, fmt.Errorf("output folder %s: lock: %w", dir, err)
		}
		// A holder removes the lock file before releasing it. Having locked a
		// file that was removed meanwhile, or replaced by a newer one, locks
		// nothing: take the one now at the path instead.
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(held, now) {
			f.Close()
			continue
		}
		l := &lockFile{path: path, f: f}
		if err := l.writeHolder(); err != nil {
			f.Close()
			return nil, fmt.Errorf("output folder %s: lock: %w", dir, err)
		}
		return l, nil
	}
}

// release removes the lock file while still holding it, then lets it go, so
// a folder keeps no control file once its writer is done.
func (l *lockFile) release() error {
	err := os.Remove(l.path)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
