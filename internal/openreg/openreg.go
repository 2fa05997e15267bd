// Package openreg opens the files the tool reads by name (a lock, a
// tools.parquet, a report.json, a census file) and refuses what is not a
// regular file. Opening a FIFO for reading blocks in open(2) until a writer
// comes, which may be never, and a process blocked there cannot even be
// stopped by SIGTERM's handler; a device such as /dev/zero never ends. So
// the file is opened without blocking and its type checked on the open
// descriptor (not by a stat before the open, which a rename could race).
package openreg

import (
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/gunzip"
)

// NotRegularError is an input path that names something other than a
// regular file (after symlinks are followed).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s)", e.Path, kind(e.Mode))
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "mode " + m.String()
}

// Open opens path for reading if it is a regular file; anything else is a
// *NotRegularError, returned without blocking.
func Open(path string) (*os.File, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}

// TooLargeError is a file longer than its reader accepts.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %d bytes, the most read for it", e.Path, e.Limit)
}

// ReadFile reads the regular file path whole, as os.ReadFile does, but
// refuses one longer than limit bytes with a *TooLargeError: checked on
// its size first, and on the bytes read, in case it grows meanwhile.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return b, nil
}

// OpenGunzipped opens path as Open does and, when its name ends in .gz,
// reads it through internal/gunzip: the census files are read plain or
// gzipped by their name. Closing the result closes the file.
func OpenGunzipped(path string) (io.ReadCloser, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, nil
	}
	zr, err := gunzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return gunzipped{zr, f}, nil
}

// gunzipped reads the inflated file and closes the file beneath.
type gunzipped struct {
	io.Reader
	f *os.File
}

func (g gunzipped) Close() error { return g.f.Close() }

// Sum is the hex digest under h of the content of the regular file path,
// read once.
func Sum(path string, h hash.Hash) (string, error) {
	f, err := Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
