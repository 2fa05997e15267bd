// What two listings of tools have in common and what changed: the key that
// pairs a tool of one with a tool of the other, the kind of a change, and
// the classes a tool gained and lost. The lock (one server) and the
// tool-level diff of two runs (every server) both build on them.

package toolid

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// ChangeKind is how a tool differs between an old and a new listing. The
// zero value is Unchanged.
type ChangeKind uint8

// The kinds of change. A tool is Added when only the new listing has its
// key, Removed when only the old one does, Changed when both do and its
// definition hash differs. Renamed (a lock's comparison only) is a
// removed and an added tool whose definitions are the same but for the
// name: a rename that would otherwise pass for two unrelated tools.
const (
	Unchanged ChangeKind = iota
	Added
	Removed
	Changed
	Renamed
)

var changeNames = [...]string{Unchanged: "unchanged", Added: "added", Removed: "removed", Changed: "changed", Renamed: "renamed"}

// String is the kind as the outputs spell it: "added", "removed",
// "changed", "renamed" (and "unchanged").
func (k ChangeKind) String() string {
	if int(k) < len(changeNames) {
		return changeNames[k]
	}
	return fmt.Sprintf("ChangeKind(%d)", k)
}

// MarshalText writes the kind as String spells it, for JSON.
func (k ChangeKind) MarshalText() ([]byte, error) {
	if int(k) >= len(changeNames) {
		return nil, fmt.Errorf("toolid: no change kind %d", k)
	}
	return []byte(changeNames[k]), nil
}

// UnmarshalText reads a kind as String spells it.
func (k *ChangeKind) UnmarshalText(b []byte) error {
	for i, n := range changeNames {
		if n == string(b) {
			*k = ChangeKind(i)
			return nil
		}
	}
	return fmt.Errorf("toolid: %q is not a change kind (added, removed, changed, renamed, unchanged)", b)
}

// GainedLost returns the normative classes new carries and old does not
// (gained), and those old carries and new does not (lost). An added tool
// is GainedLost(0, new): it gains all its classes; a removed one loses
// them.
func GainedLost(old, new classify.Set) (gained, lost classify.Set) {
	return new &^ old & classify.Classes, old &^ new & classify.Classes
}

// Key is a tool's identity across two listings: its server id, its name
// and its ordinal among the tools of that name on that server (0 for the
// first), so that a server listing one name twice has two tools. The
// server id and name are null when the record or tool lacks them; a null
// is no string, not even the empty one.
type Key struct {
	ServerID    string
	HasServerID bool
	Name        string
	HasName     bool
	NameOrdinal int64
}

// Digest is 16 bytes standing for the server id and name of a Key (not
// its ordinal), for comparisons that hold millions of tools and so cannot
// hold their strings.
type Digest [16]byte

// A Keyer makes Digests. Its seeds are random per Keyer: digests are
// comparable only between those of one Keyer. It is not safe for
// concurrent use.
type Keyer struct {
	s1, s2 maphash.Seed
	h      maphash.Hash
}

// NewKeyer returns a Keyer.
func NewKeyer() *Keyer { return &Keyer{s1: maphash.MakeSeed(), s2: maphash.MakeSeed()} }

// Digest digests a server id and a tool name, each with whether it is
// there (false for a null). Two pairs share a digest only by a 128-bit
// collision.
func (k *Keyer) Digest(server []byte, hasServer bool, name []byte, hasName bool) Digest {
	var out Digest
	binary.LittleEndian.PutUint64(out[:8], k.sum(k.s1, server, hasServer, name, hasName))
	binary.LittleEndian.PutUint64(out[8:], k.sum(k.s2, server, hasServer, name, hasName))
	return out
}

func (k *Keyer) sum(seed maphash.Seed, server []byte, hasServer bool, name []byte, hasName bool) uint64 {
	h := &k.h
	h.SetSeed(seed)
	// Lengths and null flags first, so that no two pairs run together.
	var head [18]byte
	head[0], head[1] = b2u(hasServer), b2u(hasName)
	binary.LittleEndian.PutUint64(head[2:], uint64(len(server)))
	binary.LittleEndian.PutUint64(head[10:], uint64(len(name)))
	h.Write(head[:])
	h.Write(server)
	h.Write(name)
	return h.Sum64()
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}
