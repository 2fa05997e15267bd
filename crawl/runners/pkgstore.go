package runners

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// pkgStore is the package store: a content-addressed store of the files
// of installed packages. A file of the same content and mode in any number
// of package folders is one file on disk, hard-linked from each folder
// (never a copy per package), as pnpm's store does; a file no package
// folder links any more is removed by Prune, so the store is bounded by
// the package folders that use it and evicted with them, least recently
// used first. It is a folder of files named by their content's SHA-256 and their
// mode. It must be on the file system of the package folders it serves:
// hard links do not cross file systems.
type pkgStore struct {
	dir string
}

// storeStats says what Adopt did with a folder's files.
type storeStats struct {
	// Files is the regular files seen; Shared those the store already
	// held (now links to its file); Added those it now holds.
	Files, Shared, Added int
	// SharedBytes is the size of the Shared files: the disk space not
	// taken twice; AddedBytes the size of the Added ones, what the store
	// grew by.
	SharedBytes, AddedBytes int64
}

// openStore makes (or finds) the store in dir.
func openStore(dir string) (*pkgStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &pkgStore{dir: dir}, nil
}

// Dir is the store's folder.
func (s *pkgStore) Dir() string { return s.dir }

// path is where the store keeps content of hash sum with permissions
// perm: two levels, so no folder holds too many names.
func (s *pkgStore) path(sum []byte, perm fs.FileMode) string {
	h := hex.EncodeToString(sum)
	return filepath.Join(s.dir, h[:2], h[2:]+"-"+strconv.FormatUint(uint64(perm), 8))
}

// Adopt makes every regular file under tree a hard link to the store's
// file of the same content and mode, adding to the store the files it
// lacks. Files are made read-only (to all), since one inode now stands
// for many packages' files. A file that is already a link to the store's
// file is left as it is.
func (s *pkgStore) Adopt(tree string) (storeStats, error) {
	var st storeStats
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		perm := info.Mode().Perm() &^ 0o222
		sum, err := storeHash(p)
		if err != nil {
			return err
		}
		st.Files++
		how, err := s.adoptFile(p, info, sum, perm)
		switch how {
		case adoptAdded:
			st.Added++
			st.AddedBytes += info.Size()
		case adoptLinked:
			st.Shared++
			st.SharedBytes += info.Size()
		case adoptHeld:
			st.Shared++
		}
		return err
	})
	return st, err
}

// adoption is what adoptFile did with a file.
type adoption int

const (
	adoptFailed adoption = iota
	adoptAdded           // the store did not hold its content: now it does
	adoptLinked          // the store did: the file is now a link to the store's
	adoptHeld            // the file was the store's already
)

// adoptFile makes file p (info its Lstat, sum its content's SHA-256) a
// hard link to the store's file of its content and permissions perm
// (read-only), adding it to the store when the store lacks it.
func (s *pkgStore) adoptFile(p string, info fs.FileInfo, sum []byte, perm fs.FileMode) (adoption, error) {
	target := s.path(sum, perm)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return adoptFailed, err
	}
	for range 2 {
		held, err := os.Lstat(target)
		if err == nil {
			if os.SameFile(held, info) {
				return adoptHeld, nil
			}
			// Link the store's file in place of this one: a temporary
			// name then a rename, so the path always names a whole file.
			tmp := p + ".pkgstore-tmp"
			_ = os.Remove(tmp)
			if err := os.Link(target, tmp); err != nil {
				return adoptFailed, fmt.Errorf("pkgstore: %w", err)
			}
			if err := os.Rename(tmp, p); err != nil {
				_ = os.Remove(tmp)
				return adoptFailed, err
			}
			return adoptLinked, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return adoptFailed, err
		}
		if err := os.Chmod(p, perm); err != nil {
			return adoptFailed, err
		}
		err = os.Link(p, target)
		if err == nil {
			return adoptAdded, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return adoptFailed, fmt.Errorf("pkgstore: %w", err)
		}
		// Another install added the same content meanwhile: link it.
	}
	return adoptFailed, fmt.Errorf("pkgstore: %s keeps changing", target)
}

func storeHash(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// Prune removes the files no package folder links any more (a link
// count of one: the store's own name) and says how many bytes that
// freed. The package folders' least recent use decides what goes: the
// caller evicts folders, then prunes.
func (s *pkgStore) Prune() (int64, error) {
	var freed int64
	err := s.eachFile(func(p string, info fs.FileInfo) error {
		if sys, ok := info.Sys().(*syscall.Stat_t); ok && sys.Nlink == 1 {
			if err := os.Remove(p); err != nil {
				return err
			}
			freed += info.Size()
		}
		return nil
	})
	return freed, err
}

// Size is the bytes of the files the store holds: each once, however
// many packages link it.
func (s *pkgStore) Size() (int64, error) {
	var n int64
	err := s.eachFile(func(_ string, info fs.FileInfo) error {
		n += info.Size()
		return nil
	})
	return n, err
}

// eachFile calls fn with each of the store's files.
func (s *pkgStore) eachFile(fn func(p string, info fs.FileInfo) error) error {
	return filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return fn(p, info)
	})
}
