// A lock pins the tools of one MCP server: a lock file lists each
// tool with its definition hash and labels, and a later listing is compared
// with it, so that a CI job or a gateway's start-up notices a tool that
// changed, appeared or vanished (a tool that quietly gains a command or a
// token parameter is the change pinning exists for).

package toolid

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// Version is the lock file format this package writes and reads.
const Version = 1

// File is a lock file: one server's tools in listing order.
type File struct {
	Version  int    `json:"version"`
	ServerID string `json:"server_id"`
	Tools    []Tool `json:"tools"`
}

// Tool is one pinned tool. It is identified by its name and its ordinal
// among the server's tools of that name.
type Tool struct {
	// Name is null for a tool without a string name.
	Name        *string `json:"name"`
	NameOrdinal int     `json:"name_ordinal"`
	// Definition is the SHA-256 of the whole tool object in canonical JSON
	// (hex); Schema that of its input schema alone, null without one.
	Definition      string   `json:"definition_sha256"`
	Schema          *string  `json:"schema_sha256"`
	Classes         []string `json:"classes"`
	RequiredClasses []string `json:"required_classes"`
}

// New returns an empty lock of server id.
func New(serverID string) *File {
	return &File{Version: Version, ServerID: serverID, Tools: []Tool{}}
}

// Add appends a tool, numbering it among the tools of its name.
func (f *File) Add(t Tool) {
	t.NameOrdinal = 0
	for i := range f.Tools {
		if eqName(f.Tools[i].Name, t.Name) {
			t.NameOrdinal++
		}
	}
	if t.Classes == nil {
		t.Classes = []string{}
	}
	if t.RequiredClasses == nil {
		t.RequiredClasses = []string{}
	}
	f.Tools = append(f.Tools, t)
}

func eqName(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// MaxLockBytes bounds the lock file Read accepts: a lock of the largest
// server the crawl keeps (DefaultMaxTools tools, a few hundred bytes each)
// is a few MiB, and the file is decoded whole.
const MaxLockBytes = 64 << 20

// Read reads a lock file. A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist). Only a regular file of at most
// MaxLockBytes holding one JSON document (and nothing after it) is read.
func Read(path string) (*File, error) {
	b, err := openreg.ReadFile(path, MaxLockBytes)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not a tool lock file: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: not a tool lock file: more after the JSON document (at byte %d)", path, dec.InputOffset())
	}
	if f.Version != Version {
		return nil, fmt.Errorf("%s: lock file version %d; this build reads version %d", path, f.Version, Version)
	}
	return &f, nil
}

// Exists reports whether path names a file (a lock to compare with).
func Exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Write writes the lock atomically: a temporary beside path, renamed over
// it, so that a crash never leaves half a lock.
func (f *File) Write(path string) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return outset.WriteFile(path, append(b, '\n'), 0o644)
}

// Change is one tool that changed, appeared or vanished.
type Change struct {
	// Kind is "added", "removed" or "changed".
	Kind     string `json:"change"`
	Old, New *Tool  `json:",omitempty"`
	// ClassesGained and ClassesLost compare the labels of the two sides.
	ClassesGained []string `json:"classes_gained"`
	ClassesLost   []string `json:"classes_lost"`
}

// Tool is the side of c that exists (the new one when both do).
func (c *Change) Tool() *Tool {
	if c.New != nil {
		return c.New
	}
	return c.Old
}

// Compare lists what changed from old to new: changed tools in the new
// listing's order, then added ones, then removed ones in the old order.
func Compare(old, new *File) []Change {
	type id struct {
		name    string
		null    bool
		ordinal int
	}
	key := func(t *Tool) id {
		if t.Name == nil {
			return id{null: true, ordinal: t.NameOrdinal}
		}
		return id{name: *t.Name, ordinal: t.NameOrdinal}
	}
	oldByID := make(map[id]*Tool, len(old.Tools))
	for i := range old.Tools {
		oldByID[key(&old.Tools[i])] = &old.Tools[i]
	}
	seen := map[id]bool{}
	var changed, added []Change
	for i := range new.Tools {
		n := &new.Tools[i]
		k := key(n)
		seen[k] = true
		o, ok := oldByID[k]
		switch {
		case !ok:
			added = append(added, Change{Kind: "added", New: n, ClassesGained: n.Classes, ClassesLost: []string{}})
		case o.Definition != n.Definition:
			changed = append(changed, Change{Kind: "changed", Old: o, New: n,
				ClassesGained: minus(n.Classes, o.Classes), ClassesLost: minus(o.Classes, n.Classes)})
		}
	}
	out := append(changed, added...)
	for i := range old.Tools {
		if o := &old.Tools[i]; !seen[key(o)] {
			out = append(out, Change{Kind: "removed", Old: o, ClassesGained: []string{}, ClassesLost: o.Classes})
		}
	}
	return out
}

// minus is the ids of a not in b, in a's order.
func minus(a, b []string) []string {
	out := []string{}
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// AddRecord adds the tools of one census record doc (as the crawl's client
// writes a server's tools/list result), hashed with toolhash; labels gives
// the classes and required classes of the i-th tool.
func (f *File) AddRecord(doc []byte, labels func(i int) (classes, required []string)) error {
	rec, err := census.NewDecoder().Decode(doc)
	if err != nil {
		return err
	}
	var h Hasher
	for i := range rec.Tools {
		t := &rec.Tools[i]
		s := h.Tool(t)
		lt := Tool{Definition: hex.EncodeToString(s.Definition[:])}
		if t.HasName {
			n := string(t.Name)
			lt.Name = &n
		}
		if s.HasSchema {
			sh := hex.EncodeToString(s.Schema[:])
			lt.Schema = &sh
		}
		lt.Classes, lt.RequiredClasses = labels(i)
		f.Add(lt)
	}
	return nil
}

// WriteChanges writes changes for people, one line each: the change, the
// tool (name#ordinal when the server has several of that name), the
// definition hashes, and the classes gained and lost.
func WriteChanges(w io.Writer, changes []Change) error {
	for _, c := range changes {
		t := c.Tool()
		name := "(no name)"
		if t.Name != nil {
			name = strconv.Quote(*t.Name)
		}
		if t.NameOrdinal > 0 {
			name += fmt.Sprintf("#%d", t.NameOrdinal)
		}
		line := fmt.Sprintf("%-8s %s", c.Kind, name)
		switch c.Kind {
		case "changed":
			line += fmt.Sprintf(" definition %.12s… -> %.12s…", c.Old.Definition, c.New.Definition)
		default:
			line += fmt.Sprintf(" definition %.12s…", t.Definition)
		}
		if len(c.ClassesGained) > 0 {
			line += " gained " + strings.Join(c.ClassesGained, ",")
		}
		if len(c.ClassesLost) > 0 {
			line += " lost " + strings.Join(c.ClassesLost, ",")
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
