//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package outset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// acquire, where flock(2) is missing, creates the lock file exclusively. A
// killed writer's lock file then stays behind and must be removed by hand;
// the error says which process left it.
func acquire(dir string) (*lockFile, error) {
	path := lockPath(dir)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
	if errors.Is(err, fs.ErrExist) {
		data, _ := os.ReadFile(path)
		return nil, readHolder(dir, data)
	}
	if err != nil {
		return nil, fmt.Errorf("output folder %s: lock: %w", dir, err)
	}
	l := &lockFile{path: path, f: f}
	if err := l.writeHolder(); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("output folder %s: lock: %w", dir, err)
	}
	return l, nil
}

func (l *lockFile) release() error {
	l.f.Close()
	return os.Remove(l.path)
}
