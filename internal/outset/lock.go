package outset

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// lockFile is a held writer lock on a folder.
type lockFile struct {
	path string
	f    *os.File
}

// holderInfo is what the lock file says about its holder, so that a second
// writer can name the first.
func holderInfo() []byte {
	host, _ := os.Hostname()
	return fmt.Appendf(nil, "pid %d\nhost %s\nsince %s\n",
		os.Getpid(), strconv.Quote(host), time.Now().UTC().Format(time.RFC3339))
}

// readHolder parses a lock file's contents; fields it cannot read stay zero.
// Only the first occurrence of each key counts: a holder overwrites the file
// in place before truncating it, so a stale tail may follow.
func readHolder(dir string, data []byte) *LockedError {
	e := &LockedError{Dir: dir}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), " ")
		switch key {
		case "pid":
			if e.PID == 0 {
				e.PID, _ = strconv.Atoi(val)
			}
		case "host":
			if e.Host == "" {
				e.Host, _ = strconv.Unquote(val)
			}
		case "since":
			if e.Since == "" {
				e.Since = val
			}
		}
	}
	return e
}

// writeHolder records this process in the held lock file: written in place
// first and truncated after, so a reader never sees it empty.
func (l *lockFile) writeHolder() error {
	info := holderInfo()
	if _, err := l.f.WriteAt(info, 0); err != nil {
		return err
	}
	return l.f.Truncate(int64(len(info)))
}

func lockPath(dir string) string { return filepath.Join(dir, lockName) }
