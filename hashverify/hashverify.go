// Package hashverify holds the pinned SHA-256 hashes of the frozen census
// files and verifies files against them, or against a sha256sum manifest,
// on the same read that consumes the bytes.
package hashverify

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"path"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// SnapshotFiles returns the three files a run reads and verifies, in the
// spec's order (a fresh slice).
func SnapshotFiles() []string {
	return []string{release.ServersFile, release.ToolsFile, release.CandidatesFile}
}

// Manifest maps a file's base name to its lowercase hex SHA-256.
type Manifest map[string]string

// Pinned returns the manifest the spec pins for the 2026-10-12 snapshot: a
// copy, which the caller may change.
func Pinned() Manifest { return maps.Clone(pinned) }

// pinned is the spec's manifest; see Pinned.
var pinned = Manifest{
	release.ServersFile:    "3071866184521fb36aeac6ac715687ed4bf99b9b034646da61176f54a3dfa9d8",
	release.ToolsFile:      "2350dc773dc43fd6ed0b012588f3ff295fb358106a0291a7dc59c57427f5780f",
	release.CandidatesFile: "2f24ccc39ffeebe17f2dfe3c59f04b5b2f816c886239fdfe8df4995848326157",
}

// IsPinned reports whether m holds exactly the pinned hashes of the three
// snapshot files (a verdict of REPRODUCED needs them).
func (m Manifest) IsPinned() bool {
	for _, name := range SnapshotFiles() {
		if m[name] != pinned[name] {
			return false
		}
	}
	return true
}

// ParseSHA256Sums reads a manifest in the formats sha256sum writes:
// "<64 hex>  <name>" or "<64 hex> *<name>" per line, or with --tag (BSD
// style, as shasum and openssl also write) "SHA256 (<name>) = <64 hex>";
// blank lines and lines starting with '#' are ignored. Names are reduced to
// their base name. src names the manifest in errors.
func ParseSHA256Sums(r io.Reader, src string) (Manifest, error) {
	m := Manifest{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", src, n, err)
		}
		if !ok || len(sum) != 64 || name == "" {
			return nil, fmt.Errorf("%s:%d: not a sha256sum line (want \"<64 hex digits>  <name>\" or \"SHA256 (<name>) = <64 hex digits>\")", src, n)
		}
		if _, err := hex.DecodeString(sum); err != nil {
			return nil, fmt.Errorf("%s:%d: %q is not hexadecimal", src, n, sum)
		}
		base := path.Base(strings.ReplaceAll(name, `\`, "/"))
		if prev, dup := m[base]; dup && prev != strings.ToLower(sum) {
			return nil, fmt.Errorf("%s:%d: %s is listed twice with different hashes", src, n, base)
		}
		m[base] = strings.ToLower(sum)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%s: no hashes in the manifest", src)
	}
	return m, nil
}

// parseLine splits one manifest line into its hash and name, in the GNU
// form or the BSD (--tag) one; ok is false when it is neither. A BSD line
// of another algorithm is an error that names it.
func parseLine(line string) (sum, name string, ok bool, err error) {
	if algo, rest, tagged := strings.Cut(line, " ("); tagged && !strings.ContainsAny(algo, " \t") && len(algo) < 16 {
		i := strings.LastIndex(rest, ") = ")
		if i < 0 {
			return "", "", false, nil
		}
		if algo != "SHA256" {
			return "", "", false, fmt.Errorf("a %s line: the manifest must hold SHA-256 hashes (sha256sum --tag writes \"SHA256 (<name>) = <hex>\")", algo)
		}
		return rest[i+len(") = "):], rest[:i], true, nil
	}
	sum, name, ok = strings.Cut(line, " ")
	name = strings.TrimPrefix(strings.TrimPrefix(name, " "), "*")
	return sum, name, ok, nil
}

// ReadSHA256Sums reads a manifest file. A manifest in a folder that a writer
// left between two sets may describe files that are not there yet, so such a
// folder is an error for which errors.Is(err, ErrInterrupted) holds.
func ReadSHA256Sums(file string) (Manifest, error) {
	f, err := outset.OpenFile(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSHA256Sums(f, file)
}

// ErrInterrupted is the error of a folder that a writer left between two
// sets of files (stopped while renaming them): test for it with errors.Is.
// Running the command that writes the folder again completes it.
var ErrInterrupted = outset.ErrInterrupted

// Reader hashes what is read through it, so that verification rides on the
// read that decompresses or copies the bytes: no second pass over a file.
type Reader struct {
	r io.Reader
	h hash.Hash
	n int64
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r, h: sha256.New()} }

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

// N is the number of bytes read so far.
func (r *Reader) N() int64 { return r.n }

// Sum is the lowercase hex SHA-256 of the bytes read so far.
func (r *Reader) Sum() string { return hex.EncodeToString(r.h.Sum(nil)) }

// MismatchError reports a file whose hash is not the expected one.
type MismatchError struct {
	Name, Expected, Actual string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: SHA-256 mismatch: expected %s, got %s", e.Name, e.Expected, e.Actual)
}

// Check compares the hash of name with the manifest's. A name the manifest
// does not list is an error too: an unverifiable input is not verified.
func (m Manifest) Check(name, actual string) error {
	want, ok := m[name]
	if !ok {
		return fmt.Errorf("%s: the manifest lists no SHA-256 for it", name)
	}
	if want != actual {
		return &MismatchError{Name: name, Expected: want, Actual: actual}
	}
	return nil
}
