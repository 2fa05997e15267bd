//go:build unix

package openreg

import (
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenRefusesWhatIsNotARegularFile: a FIFO with no writer, a device, a
// folder and a symlink to a device are refused at once (a FIFO would block
// open(2) for good); a regular file and a symlink to one are opened.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "tools.parquet")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	regular := filepath.Join(dir, "lock.json")
	if err := os.WriteFile(regular, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	toZero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", toZero); err != nil {
		t.Fatal(err)
	}
	toRegular := filepath.Join(dir, "link")
	if err := os.Symlink(regular, toRegular); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, kind string
	}{
		{fifo, "a named pipe"},
		{"/dev/null", "a character device"},
		{toZero, "a character device"},
		{dir, "a folder"},
		{regular, ""},
		{toRegular, ""},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			f, err := Open(tc.path)
			if f != nil {
				f.Close()
			}
			_, rerr := ReadFile(tc.path, 1<<20)
			for _, err := range []error{err, rerr} {
				var nr *NotRegularError
				switch {
				case tc.kind == "" && err != nil:
					t.Errorf("%v, want it opened", err)
				case tc.kind != "" && (!errors.As(err, &nr) || !strings.Contains(err.Error(), tc.kind) || !strings.HasPrefix(err.Error(), tc.path)):
					t.Errorf("err = %v, want a NotRegularError naming %s and %s", err, tc.path, tc.kind)
				}
			}
		})
	}
}

func TestReadFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limit int64
		ok    bool
	}{{10, true}, {100, true}, {9, false}, {0, false}} {
		b, err := ReadFile(path, tc.limit)
		var tl *TooLargeError
		if tc.ok && (err != nil || string(b) != "0123456789") {
			t.Errorf("limit %d: %q, %v", tc.limit, b, err)
		}
		if !tc.ok && !errors.As(err, &tl) {
			t.Errorf("limit %d: err = %v, want a TooLargeError", tc.limit, err)
		}
	}
}

func TestSum(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		h    hash.Hash
		want string
	}{
		{sha256.New(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{md5.New(), "900150983cd24fb0d6963f7d28e17f72"},
	} {
		if got, err := Sum(p, tc.h); err != nil || got != tc.want {
			t.Errorf("Sum = %q, %v; want %q", got, err, tc.want)
		}
	}
	var nr *NotRegularError
	if _, err := Sum(dir, sha256.New()); !errors.As(err, &nr) {
		t.Errorf("Sum of a folder: %v, want a NotRegularError", err)
	}
}
