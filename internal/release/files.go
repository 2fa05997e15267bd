package release

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/pgzip"

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
)

// The files of a census release, as the frozen snapshot names them.
const (
	// ToolsFile holds the tools, one line per server or per tool.
	ToolsFile = "server_tools.jsonl.gz"
	// ServersFile holds one record per server.
	ServersFile = "servers.jsonl.gz"
	// CandidatesFile holds the candidate endpoints, uncompressed.
	CandidatesFile = "candidates_remotes.jsonl"
	// SumsFile is the sha256sum manifest of the release's other files.
	SumsFile = "SHA256SUMS"
)

// Compression says how a Writer compresses its file. The zero value
// writes the bytes as they come.
type Compression struct {
	// Gzip compresses the file with gzip at Level (a klauspost/compress
	// level; 0 means gzip.DefaultCompression). The header has no name and
	// no mtime, so that the same records give the same bytes.
	Gzip  bool
	Level int
	// Parallel, with Gzip, compresses blocks of Block bytes on that many
	// goroutines (pgzip): other bytes than the sequential writer's, the
	// same for any machine.
	Parallel, Block int
}

// Writer is one file of a release being written under a temporary name of
// an outset.Set, hashed as it is written: its SHA-256 is that of the bytes
// on disk, known at Finish without a second read.
type Writer struct {
	name string
	sum  hash.Hash
	buf  *bufio.Writer
	zw   io.WriteCloser // nil for an uncompressed file
	w    io.Writer      // where the caller's bytes go
}

// Create starts the file name in set. The caller writes it with Write,
// then calls Finish; the set's Commit puts it in place. After an error the
// caller calls Abort (the set's Close removes the file).
func Create(set *outset.Set, name string, c Compression) (*Writer, error) {
	f, err := set.Create(name)
	if err != nil {
		return nil, err
	}
	w := &Writer{name: name, sum: sha256.New()}
	w.buf = bufio.NewWriterSize(io.MultiWriter(f, w.sum), 256<<10)
	w.w = w.buf
	if c.Gzip {
		level := c.Level
		if level == 0 {
			level = gzip.DefaultCompression
		}
		if c.Parallel > 0 {
			zw, err := pgzip.NewWriterLevel(w.buf, level)
			if err != nil {
				return nil, err
			}
			if err := zw.SetConcurrency(c.Block, c.Parallel); err != nil {
				return nil, err
			}
			w.zw = zw
		} else {
			zw, err := gzip.NewWriterLevel(w.buf, level)
			if err != nil {
				return nil, err
			}
			w.zw = zw
		}
		w.w = w.zw
	}
	return w, nil
}

// CreateSnapshot starts the three files of the snapshot's layout in set,
// in the order ToolsFile, ServersFile, CandidatesFile: the two .gz ones
// compressed with gz, the candidates as they come. On error it aborts the
// ones it started.
func CreateSnapshot(set *outset.Set, gz Compression) ([]*Writer, error) {
	var ws []*Writer
	for _, f := range []struct {
		name string
		c    Compression
	}{{ToolsFile, gz}, {ServersFile, gz}, {CandidatesFile, Compression{}}} {
		w, err := Create(set, f.name, f.c)
		if err != nil {
			for _, w := range ws {
				w.Abort()
			}
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// Name is the file's final name.
func (w *Writer) Name() string { return w.name }

// Write writes p to the file, through the compressor if there is one.
func (w *Writer) Write(p []byte) (int, error) { return w.w.Write(p) }

// Finish ends the compressed stream, flushes the file and returns its
// SHA-256 in lowercase hex; the set's Commit syncs it.
func (w *Writer) Finish() (string, error) {
	if w.zw != nil {
		err := w.zw.Close()
		w.zw = nil
		if err != nil {
			return "", fmt.Errorf("%s: %w", w.name, err)
		}
	}
	if err := w.buf.Flush(); err != nil {
		return "", fmt.Errorf("%s: %w", w.name, err)
	}
	return hex.EncodeToString(w.sum.Sum(nil)), nil
}

// Abort stops a parallel compressor's goroutines; the set removes the file.
func (w *Writer) Abort() {
	if w.zw != nil {
		w.zw.Close()
		w.zw = nil
	}
}

// AppendSums appends a SHA256SUMS manifest of sums (file name to lowercase
// hex SHA-256) to b, sorted by name, in the form sha256sum writes and
// hashverify.ParseSHA256Sums reads: "<hex>  <name>" a line. A name that
// form cannot carry back unchanged (one with a line break, a slash or a
// backslash, or starting with '*', which sha256sum would escape or the
// parser would read otherwise) is an error.
func AppendSums(b []byte, sums map[string]string) ([]byte, error) {
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		if err := sumsName(name); err != nil {
			return b, err
		}
		b = fmt.Appendf(b, "%s  %s\n", sums[name], name)
	}
	return b, nil
}

func sumsName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("%s: %q cannot be listed", SumsFile, name)
	case strings.ContainsAny(name, "\n\r/\\"), strings.HasPrefix(name, "*"):
		return fmt.Errorf("%s: the file name %q cannot be written so that it reads back the same", SumsFile, name)
	}
	return nil
}

// WriteSums adds SHA256SUMS, listing sums, to set.
func WriteSums(set *outset.Set, sums map[string]string) error {
	b, err := AppendSums(nil, sums)
	if err != nil {
		return err
	}
	return set.WriteFile(SumsFile, b)
}
