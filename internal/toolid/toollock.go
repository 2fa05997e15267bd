// A lock pins the tools of one MCP server: a lock file lists each
// tool with its definition hash and labels, and a later listing is compared
// with it, so that a CI job or a gateway's start-up notices a tool that
// changed, appeared or vanished (a tool that quietly gains a command or a
// token parameter is the change pinning exists for).

package toolid

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
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
	Definition string  `json:"definition_sha256"`
	Schema     *string `json:"schema_sha256"`
	// Body is the SHA-256 of the tool object without its name (hex), by
	// which a renamed tool is known; absent from locks written before it.
	Body            *string  `json:"body_sha256,omitempty"`
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
	for i := range f.Tools {
		for _, ids := range [][]string{f.Tools[i].Classes, f.Tools[i].RequiredClasses} {
			if _, err := setOf(ids); err != nil {
				return nil, fmt.Errorf("%s: tool %d: %w", path, i, err)
			}
		}
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
	Kind ChangeKind `json:"change"`
	Old  *Tool      `json:"old,omitempty"`
	New  *Tool      `json:"new,omitempty"`
	// ClassesGained and ClassesLost compare the labels of the two sides.
	ClassesGained []string `json:"classes_gained"`
	ClassesLost   []string `json:"classes_lost"`
	// SchemaChanged says a changed tool's input schema is not the one
	// pinned (its description or other members may have changed too).
	SchemaChanged bool `json:"schema_changed,omitempty"`
}

// Tool is the side of c that exists (the new one when both do).
func (c *Change) Tool() *Tool {
	if c.New != nil {
		return c.New
	}
	return c.Old
}

// Compare lists what changed from old to new: changed tools in the new
// listing's order, then renamed ones, then added ones, then removed ones in
// the old order. Tools are paired by Key (one server: name and ordinal
// among equal names); an added tool whose definition without its name is
// that of a removed one is paired with it as Renamed.
func Compare(old, new *File) []Change {
	return pairRenames(compareByKey(old, new))
}

func compareByKey(old, new *File) []Change {
	key := func(t *Tool) Key {
		k := Key{NameOrdinal: int64(t.NameOrdinal)}
		if t.Name != nil {
			k.Name, k.HasName = *t.Name, true
		}
		return k
	}
	oldByKey := make(map[Key]*Tool, len(old.Tools))
	for i := range old.Tools {
		oldByKey[key(&old.Tools[i])] = &old.Tools[i]
	}
	seen := map[Key]bool{}
	var changed, added []Change
	for i := range new.Tools {
		n := &new.Tools[i]
		k := key(n)
		seen[k] = true
		o, ok := oldByKey[k]
		switch {
		case !ok:
			added = append(added, change(Added, nil, n))
		case o.Definition != n.Definition:
			c := change(Changed, o, n)
			c.SchemaChanged = !eqName(o.Schema, n.Schema)
			changed = append(changed, c)
		}
	}
	out := append(changed, added...)
	for i := range old.Tools {
		if o := &old.Tools[i]; !seen[key(o)] {
			out = append(out, change(Removed, o, nil))
		}
	}
	return out
}

// pairRenames turns each added tool whose body hash (the definition
// without the name) is that of a removed tool into one Renamed change,
// each removed tool paired at most once, in the order the tools come.
func pairRenames(cs []Change) []Change {
	removed := map[string][]int{} // body hash -> indexes of removed changes
	for i, c := range cs {
		if c.Kind == Removed && c.Old.Body != nil {
			removed[*c.Old.Body] = append(removed[*c.Old.Body], i)
		}
	}
	if len(removed) == 0 {
		return cs
	}
	gone := map[int]bool{}
	var renamed []Change
	for i, c := range cs {
		if c.Kind != Added || c.New.Body == nil || len(removed[*c.New.Body]) == 0 {
			continue
		}
		j := removed[*c.New.Body][0]
		removed[*c.New.Body] = removed[*c.New.Body][1:]
		gone[i], gone[j] = true, true
		renamed = append(renamed, change(Renamed, cs[j].Old, c.New))
	}
	out := make([]Change, 0, len(cs)-len(renamed))
	at := 0
	for at < len(cs) && cs[at].Kind == Changed {
		out = append(out, cs[at])
		at++
	}
	out = append(out, renamed...)
	for ; at < len(cs); at++ {
		if !gone[at] {
			out = append(out, cs[at])
		}
	}
	return out
}

// change builds a Change with the classes gained and lost between the
// sides (nil for the side without the tool).
func change(kind ChangeKind, old, new *Tool) Change {
	var was, is classify.Set
	if old != nil {
		was, _ = setOf(old.Classes)
	}
	if new != nil {
		is, _ = setOf(new.Classes)
	}
	gained, lost := GainedLost(was, is)
	return Change{Kind: kind, Old: old, New: new,
		ClassesGained: slices.Clone(gained.IDs(classify.Classes)), ClassesLost: slices.Clone(lost.IDs(classify.Classes))}
}

// setOf is the set of class ids; an id that is no normative class is an
// error (a lock file holds only those).
func setOf(ids []string) (classify.Set, error) {
	var s classify.Set
	for _, id := range ids {
		r, ok := classify.Lookup(id)
		if !ok || !r.Normative {
			return 0, fmt.Errorf("%q is not a class", id)
		}
		s |= r.Bit
	}
	return s, nil
}

// AddRecord adds the tools of one census record doc (as the crawl's client
// writes a server's tools/list result), hashed as Hasher hashes them and
// labelled by package label. Each tool is labelled from its own bytes, so
// that its labels cannot be paired with another tool's.
func (f *File) AddRecord(doc []byte) error {
	rec, err := census.NewDecoder().Decode(doc)
	if err != nil {
		return err
	}
	var h Hasher
	l := label.NewLabeller()
	var one []byte
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
		if body, err := bodyHash(t.Raw); err == nil {
			lt.Body = &body
		}
		// The tool alone, as the one tool of a tools/list result: the
		// shape the record gave it, so that none of its own members
		// changes how it is read.
		one = append(append(append(one[:0], `{"tools":[`...), t.Raw...), "]}"...)
		n := 0
		err := l.Record(one, func(tl *label.ToolLabels) error {
			n++
			lt.Classes, lt.RequiredClasses = tl.Classes, tl.RequiredClasses
			return nil
		})
		if err == nil && n != 1 {
			err = fmt.Errorf("labelled as %d tools", n)
		}
		if err != nil {
			return fmt.Errorf("tool %d: %w", i, err)
		}
		f.Add(lt)
	}
	return nil
}

// Outcome is what PinOrCompare did.
type Outcome struct {
	// Wrote is true when there was no lock file: the tools were pinned.
	Wrote bool
	// Now is the lock of the tools as listed now; Pinned the one read
	// from the file (nil when Wrote).
	Now, Pinned *File
	// Changes lead from Pinned to Now; empty when the tools match.
	Changes []Change
}

// ReadPinned reads the lock file at path before a scan, so that a lock
// that cannot be read, or written later, fails before the server is asked:
// the pinned tools, or nil when there is no lock yet and the folder it
// would be written to is there.
func ReadPinned(path string) (*File, error) {
	exists, err := lockPathReady(path)
	if err != nil || !exists {
		return nil, err
	}
	return Read(path)
}

// lockPathReady says whether a lock file is at path, and, when none is,
// fails unless the folder it would be written to is there.
func lockPathReady(path string) (bool, error) {
	exists, err := Exists(path)
	if err != nil {
		return false, fmt.Errorf("--lock %s: %w", path, err)
	}
	if exists {
		return true, nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("--lock %s: the folder %s does not exist", path, dir)
	case err != nil:
		return false, fmt.Errorf("--lock %s: %w", path, err)
	case !fi.IsDir():
		return false, fmt.Errorf("--lock %s: %s is not a folder", path, dir)
	}
	return false, nil
}

// PinOrCompare is a scan's lock step: it pins the tools of doc (server
// id's tools/list result as a census record, as the crawl's client writes
// it) in the lock file at path when pinned (ReadPinned's result) is nil,
// and otherwise compares them with the pinned tools. The file is never
// rewritten: delete it to pin new tools.
func PinOrCompare(path string, pinned *File, serverID string, doc []byte) (*Outcome, error) {
	now, err := Pin(serverID, doc)
	if err != nil {
		return nil, err
	}
	if pinned == nil {
		return &Outcome{Wrote: true, Now: now}, now.Write(path)
	}
	return &Outcome{Now: now, Pinned: pinned, Changes: Compare(pinned, now)}, nil
}

// WriteChanges writes changes for people, one line each: the change, the
// tool (name#ordinal when the server has several of that name), the
// definition hashes, and the classes gained and lost.
func WriteChanges(w io.Writer, changes []Change) error {
	for _, c := range changes {
		name := ToolName(c.Tool())
		line := fmt.Sprintf("%-8s %s", c.Kind, name)
		switch c.Kind {
		case Renamed:
			line = fmt.Sprintf("%-8s %s -> %s definition %.12s…", c.Kind, ToolName(c.Old), name, c.New.Definition)
		case Changed:
			line += fmt.Sprintf(" definition %.12s… -> %.12s…", c.Old.Definition, c.New.Definition)
			if c.SchemaChanged {
				line += " (input schema changed)"
			}
		default:
			line += fmt.Sprintf(" definition %.12s…", c.Tool().Definition)
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

// ToolName is t's name as the change lines show it: quoted, with #ordinal
// when the server has several of that name, "(no name)" without one.
func ToolName(t *Tool) string {
	name := "(no name)"
	if t.Name != nil {
		name = strconv.Quote(*t.Name)
	}
	if t.NameOrdinal > 0 {
		name += fmt.Sprintf("#%d", t.NameOrdinal)
	}
	return name
}

// bodyHash is the SHA-256 (hex) of the tool object raw without its "name"
// member, in canonical JSON: what a rename leaves as it was. Duplicate
// keys count as the definition hash counts them (the last wins).
func bodyHash(raw []byte) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	delete(m, "name")
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	if b, err = census.AppendCanonical(nil, b); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
