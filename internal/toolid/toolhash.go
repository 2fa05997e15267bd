// Package toolid holds a tool's identity and what is built on it: the
// SHA-256 of its whole definition as served, and of its input schema alone, both over RFC 8785
// canonical JSON (census.AppendCanonical), so that key order, whitespace,
// escapes and number spelling are no change, and duplicate keys count as
// CPython's json reads them (the last wins). Hashing the whole object, not
// only name, description and input schema, catches changes to
// annotations, outputSchema or _meta that pins of the three miss.
package toolid

import (
	"bytes"
	"crypto/sha256"
	"hash/maphash"
	"unsafe"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// Sums are a tool's hashes.
type Sums struct {
	// Definition hashes the whole tool object.
	Definition [32]byte
	// Schema hashes the input schema alone; HasSchema is false when the
	// tool has no object schema (Schema is then zero).
	Schema    [32]byte
	HasSchema bool
}

// Hasher hashes tools, reusing its buffer; one per goroutine.
//
// A census serves one definition many times over (forks, mirrors,
// aggregators: the bundled real tools resampled to the snapshot's 229,539
// tools hold 4,768 distinct definitions), so the Hasher remembers the sums
// of the tool texts it has hashed, keyed by a 64-bit maphash of the raw
// bytes. A hit is taken only when the remembered bytes equal the tool's
// (and its schema lies at the same place in them), so a collision of the
// fast hash costs a comparison, never a wrong sum: the sums are a function
// of the raw text alone. What it remembers is bounded (memoBytes of text,
// memoEntries sums); when either is full it starts afresh. Where tools
// do not repeat (a census of distinct definitions) remembering is pure
// cost, so a window of memoWindow lookups with few hits, once the memo
// holds memoWarm tools (any census misses while the memo is cold), turns
// it off for memoRest tools, its memory given back, after which it starts
// again.
type Hasher struct {
	buf  []byte
	seed maphash.Seed
	// memo maps a key to its entry in entries: a map of small values
	// stays in cache better than one holding the sums.
	memo    map[uint64]uint32
	entries []memoEntry
	// text holds the remembered tools' raw bytes, end to end.
	text []byte
	// lookups and hits count the current window; rest is how many tools
	// are still to be hashed without the memo.
	lookups, hits, rest int
}

// memoEntry is one remembered tool: its raw bytes text[off:off+n], where
// its schema lay in them (schemaOff -1 without one), and its sums.
type memoEntry struct {
	off, n             uint32
	schemaOff, schemaN int32
	sums               Sums
}

// The memo's bounds, per Hasher (one per worker). 4 MiB holds the
// distinct definitions of the real-schema census with room; a census whose
// definitions are all distinct fills it and starts afresh, which costs
// only the copies.
const (
	memoBytes   = 4 << 20
	memoEntries = 1 << 15
	// memoMaxTool is the largest tool remembered: a rare giant definition
	// would crowd out thousands of ordinary ones.
	memoMaxTool = 64 << 10
	// A window of memoWindow lookups with fewer than one hit in
	// memoMinHitRate rests the memo for memoRest tools.
	memoWindow     = 1024
	memoMinHitRate = 8
	memoRest       = 16 * memoWindow
	memoWarm       = 4 * memoWindow
)

// Tool hashes t, a tool as the census decoder gives it.
func (h *Hasher) Tool(t *census.Tool) Sums {
	raw := t.Raw
	schemaOff := -1
	if t.Schema != nil {
		schemaOff = subsliceAt(raw, t.Schema)
	}
	if h.rest > 0 {
		h.rest--
		return h.hash(t)
	}
	// A schema outside the raw text (never so from the decoder) is not
	// remembered: the key would not determine it.
	if len(raw) > memoMaxTool || (t.Schema != nil && schemaOff < 0) {
		return h.hash(t)
	}
	if h.lookups++; h.lookups == memoWindow {
		if h.hits*memoMinHitRate < h.lookups && len(h.entries) >= memoWarm {
			// Resting, the memo gives its memory back and starts
			// afresh after.
			h.rest = memoRest
			h.memo, h.entries, h.text = nil, nil, nil
			h.lookups, h.hits = 0, 0
			return h.hash(t)
		}
		h.lookups, h.hits = 0, 0
	}
	if h.memo == nil {
		h.seed = maphash.MakeSeed()
		h.memo = make(map[uint64]uint32, 1024)
	}
	k := maphash.Bytes(h.seed, raw)
	if i, ok := h.memo[k]; ok {
		if e := &h.entries[i]; int(e.n) == len(raw) && int(e.schemaOff) == schemaOff &&
			int(e.schemaN) == len(t.Schema) && bytes.Equal(h.text[e.off:e.off+e.n], raw) {
			h.hits++
			return e.sums
		}
	}
	s := h.hash(t)
	if len(h.text)+len(raw) > memoBytes || len(h.entries) >= memoEntries {
		clear(h.memo)
		h.text, h.entries = h.text[:0], h.entries[:0]
	}
	e := memoEntry{off: uint32(len(h.text)), n: uint32(len(raw)), schemaOff: int32(schemaOff), schemaN: int32(len(t.Schema)), sums: s}
	h.text = append(h.text, raw...)
	h.memo[k] = uint32(len(h.entries))
	h.entries = append(h.entries, e)
	return s
}

// subsliceAt is the offset of sub within b when sub is a part of b's
// memory, else -1.
func subsliceAt(b, sub []byte) int {
	if len(sub) == 0 || len(b) == 0 {
		return -1
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	if p < start || p+uintptr(len(sub)) > start+uintptr(len(b)) {
		return -1
	}
	return int(p - start)
}

// hash canonicalises t and hashes the tool and its schema. The schema's
// canonical form is part of the tool's: its hash is taken over that part,
// which the canonicaliser marks as it goes, rather than over a second
// canonicalisation.
func (h *Hasher) hash(t *census.Tool) Sums {
	var s Sums
	var a, b int
	var err error
	// The decoder validated Raw and Schema: they canonicalise without
	// error.
	if h.buf, a, b, err = census.AppendCanonicalTool(h.buf[:0], t.Raw); err != nil {
		panic("toolhash: a decoded tool did not canonicalise: " + err.Error())
	}
	s.Definition = sha256.Sum256(h.buf)
	if t.Schema == nil {
		return s
	}
	s.HasSchema = true
	if b > a && h.buf[a] == '{' {
		s.Schema = sha256.Sum256(h.buf[a:b])
	} else {
		s.Schema = h.sum(t.Schema)
	}
	return s
}

// Definition hashes the raw bytes of one tool object as Tool hashes a
// decoded tool's, for callers holding bytes no decoder has validated (the
// proxy); it fails when raw is not JSON.
func (h *Hasher) Definition(raw []byte) ([32]byte, error) {
	var err error
	if h.buf, err = census.AppendCanonical(h.buf[:0], raw); err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(h.buf), nil
}

// sum canonicalises raw into the buffer and hashes it.
func (h *Hasher) sum(raw []byte) [32]byte {
	var err error
	if h.buf, err = census.AppendCanonical(h.buf[:0], raw); err != nil {
		panic("toolhash: a decoded tool did not canonicalise: " + err.Error())
	}
	return sha256.Sum256(h.buf)
}

// Uncached hashes t as Tool does, without looking in or adding to the
// memo: for a caller that remembers tools itself, with more than their
// sums (pipeline's per-worker tool memo).
func (h *Hasher) Uncached(t *census.Tool) Sums {
	return h.hash(t)
}
