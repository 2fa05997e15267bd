package crawl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/jsontext"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
)

// Candidate is one line of a candidates list.
type Candidate struct {
	// Line is the 1-based line number in the list.
	Line int
	// URL is the URL as the list gives it.
	URL string
	// Record is the line to write to candidates_remotes.jsonl: the JSON
	// object as given (surrounding whitespace trimmed), or {"url": ...}
	// for a bare URL.
	Record []byte
	// Package, when not nil, is a packaged server (a line with a
	// "package" coordinate, or a bare one); URL is then empty.
	Package *runners.Package
}

// maxCandidateLine bounds one line of a candidates list.
const maxCandidateLine = 1 << 20

// ReadCandidates reads a candidates list: JSON Lines in the layout of
// candidates_remotes.jsonl (an object with a string "url", or with a
// "package" coordinate and the package's fields), or one bare URL or
// package coordinate (npm:NAME@VERSION) per line. Blank lines and lines starting with '#' are skipped. A line that
// is neither is an error naming the file and line.
func ReadCandidates(file string) ([]Candidate, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseCandidates(f, file)
}

// ParseCandidates reads a candidates list from r; src names it in errors.
func ParseCandidates(r io.Reader, src string) ([]Candidate, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxCandidateLine)
	var out []Candidate
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		c := Candidate{Line: n}
		if pkg, err := runners.ParsePackageID(string(line)); err == nil {
			c.Package = pkg
			c.Record = append(jsontext.AppendString([]byte(`{"package": `), pkg.ID()), '}')
			out = append(out, c)
			continue
		}
		if line[0] == '{' {
			var rec map[string]json.RawMessage
			if err := json.Unmarshal(line, &rec); err != nil {
				return nil, fmt.Errorf("%s:%d: not a JSON object: %w", src, n, err)
			}
			if _, ok := rec["package"]; ok && rec["url"] == nil {
				pkg, err := runners.ParsePackageRecord(line)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %w", src, n, err)
				}
				c.Package = pkg
				c.Record = append([]byte(nil), line...)
				out = append(out, c)
				continue
			}
			if err := json.Unmarshal(rec["url"], &c.URL); err != nil || c.URL == "" {
				return nil, fmt.Errorf("%s:%d: no string \"url\" in the record", src, n)
			}
			c.Record = append([]byte(nil), line...)
			if s := probe.StripUserinfo(c.URL); s != c.URL {
				// The record goes into the release: its url loses the
				// credential too, wherever the same text appears.
				c.URL = s
				c.Record = bytes.ReplaceAll(c.Record, rec["url"], jsontext.AppendString(nil, s))
			}
		} else {
			if bytes.ContainsAny(line, " \t\"") {
				return nil, fmt.Errorf("%s:%d: neither a JSON object nor a bare URL", src, n)
			}
			c.URL = probe.StripUserinfo(string(line))
			// Python's json.dumps layout, in which census files are written.
			c.Record = append(jsontext.AppendString([]byte(`{"url": `), c.URL), '}')
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: line %d: %w", src, n+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no candidates", src)
	}
	return out, nil
}

// WriteCandidates writes cands, one record a line, to file atomically
// (a temporary beside it, synced, renamed), so that a failure leaves no
// partial file.
func WriteCandidates(file string, cands []Candidate) error {
	var b bytes.Buffer
	for _, c := range cands {
		b.Write(c.Record)
		b.WriteByte('\n')
	}
	return outset.WriteFile(file, b.Bytes(), 0o666)
}

// CandidatesFile is a candidates file being written a line at a time: under
// a temporary name beside its own, renamed over it by Commit, so that it
// is written whole or not at all while memory holds a line, not the list.
type CandidatesFile struct {
	name string
	f    *os.File
	w    *bufio.Writer
	n    int
}

// CreateCandidates starts a candidates file at name.
func CreateCandidates(name string) (*CandidatesFile, error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &CandidatesFile{name: name, f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Write adds c's record as a line.
func (cf *CandidatesFile) Write(c Candidate) error {
	cf.n++
	cf.w.Write(c.Record)
	return cf.w.WriteByte('\n')
}

// Len is the number of candidates written.
func (cf *CandidatesFile) Len() int { return cf.n }

// Commit flushes, syncs and renames the file into place.
func (cf *CandidatesFile) Commit() error {
	err := cf.w.Flush()
	if err == nil {
		err = cf.f.Sync()
	}
	if cerr := cf.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(cf.f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(cf.f.Name(), cf.name)
	}
	if err != nil {
		os.Remove(cf.f.Name())
		return fmt.Errorf("%s: %w", cf.name, err)
	}
	return nil
}

// Abort removes the temporary file; after Commit it does nothing.
func (cf *CandidatesFile) Abort() {
	cf.f.Close()
	os.Remove(cf.f.Name())
}
