// Package source finds the census files where a user keeps them: in a
// folder, inside the Zenodo zip archives in that folder, or inside a zip
// given directly. Zip members are read in place, never unpacked to disk.
package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/klauspost/compress/zip"
	"strconv"
	"unicode/utf8"
)

// Source is an opened data location.
type Source struct {
	dir  string
	zips []*zipFile
}

type zipFile struct {
	path string
	rc   *zip.ReadCloser
}

// Open opens path, a folder or a .zip file. The zips of a folder are opened
// lazily only if a file is not found loose in it.
func Open(p string) (*Source, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	// A folder that a writer left half committed holds files of two sets:
	// reading it would mix them.
	folder := p
	if !fi.IsDir() {
		folder = filepath.Dir(p)
	}
	if err := outset.Check(folder); err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	s := &Source{}
	if fi.IsDir() {
		s.dir = p
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() && strings.EqualFold(filepath.Ext(e.Name()), ".zip") {
				names = append(names, filepath.Join(p, e.Name()))
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if err := s.addZip(n); err != nil {
				s.Close()
				return nil, err
			}
		}
		return s, nil
	}
	if err := s.addZip(p); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Source) addZip(p string) error {
	rc, err := zip.OpenReader(p)
	if err != nil {
		return fmt.Errorf("%s: not a readable zip archive: %w", p, err)
	}
	s.zips = append(s.zips, &zipFile{path: p, rc: rc})
	return nil
}

// Close releases the zip archives.
func (s *Source) Close() error {
	var errs []error
	for _, z := range s.zips {
		errs = append(errs, z.rc.Close())
	}
	s.zips = nil
	return errors.Join(errs...)
}

// File is one census file opened for reading.
type File struct {
	io.ReadCloser
	// Name is the file's base name.
	Name string
	// Location is where it was found: a path, or archive.zip!member/path
	// (each part through Quote: a member's name is the archive author's,
	// and it is printed to terminals and reports).
	Location string
	// Size is the file's size in bytes (the uncompressed size of a zip
	// member), or -1 when it cannot be known before reading (a named pipe).
	Size int64
}

// NotFoundError reports a census file found nowhere in the source.
type NotFoundError struct {
	Name   string
	Looked []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s: not found (looked in %s)", e.Name, strings.Join(e.Looked, ", "))
}

// Open opens the file called name: loose in the folder first, then as a
// member with that base name anywhere inside the zips, in name order. Two
// members with the same base name in one archive are an error: which one the
// snapshot means would be a guess.
func (s *Source) Open(name string) (*File, error) {
	var looked []string
	if s.dir != "" {
		p := filepath.Join(s.dir, name)
		f, err := os.Open(p)
		if err == nil {
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				return nil, err
			}
			size := fi.Size()
			if !fi.Mode().IsRegular() {
				size = -1 // a named pipe, say: its length is not known ahead
			}
			return &File{ReadCloser: f, Name: name, Location: p, Size: size}, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		looked = append(looked, s.dir)
	}
	for _, z := range s.zips {
		var found *zip.File
		for _, m := range z.rc.File {
			if m.FileInfo().IsDir() || path.Base(m.Name) != name {
				continue
			}
			if found != nil {
				return nil, fmt.Errorf("%s: %s holds it twice (%s and %s)", name, Quote(z.path), Quote(found.Name), Quote(m.Name))
			}
			found = m
		}
		if found == nil {
			looked = append(looked, z.path)
			continue
		}
		rc, err := found.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: in %s: %w", name, z.path, err)
		}
		return &File{ReadCloser: rc, Name: name, Location: Quote(z.path) + "!" + Quote(found.Name), Size: int64(found.UncompressedSize64)}, nil
	}
	return nil, &NotFoundError{Name: name, Looked: looked}
}

// Quote returns s as it is when every rune is printable, and otherwise
// quoted as strconv.Quote does: a zip member's name, chosen by whoever made
// the archive, may hold escape sequences or a newline that must not reach a
// terminal or a report raw.
func Quote(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
