package pipeline

import (
	"bytes"
	"hash/maphash"
	"unsafe"

	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

// toolResult is everything a tool's rows and counts take from its text
// beyond the decoded fields: its hashes, classes, what the sensitivity
// variants add and its surface mask. Each is a function of the tool's raw
// bytes alone (the decoder reads a tool from Raw, and classify,
// sensitivity and toolid read only the decoded tool), which is what lets
// toolMemo give it again for the same bytes.
type toolResult struct {
	sums             toolid.Sums
	labels, required classify.Set
	added            sensitivity.Added
	surface          uint8
}

// toolMemo remembers, per worker, the toolResult and per-property classes
// of the tool texts it has seen. A census serves one definition many times
// (forks, mirrors, aggregators: the real-schema census's 229,539 tools hold
// 4,768 distinct definitions), and a repeat then costs a hash of its bytes
// and a comparison instead of the classification, the sensitivity variants
// and the canonical form.
//
// A hit needs the remembered bytes equal to the tool's, its schema at the
// same place in them and the same number of properties, so a collision of
// the 64-bit key costs a comparison, never a wrong result. It holds at most
// memoBytes of text and memoEntries tools and starts afresh when full.
// Where tools do not repeat, remembering is pure cost: a window of
// memoWindow lookups with fewer than one hit in memoMinHitRate, once
// memoWarm tools are held, rests it for a number of tools that doubles
// with each such window in a row (memoRest up to memoMaxRest), keeping its
// buffers for when it starts again.
type toolMemo struct {
	seed    maphash.Seed
	index   map[uint64]uint32
	entries []memoTool
	// text holds the remembered tools' raw bytes end to end, labels their
	// properties' classes.
	text   []byte
	labels []classify.Set
	// lookups and hits count the current window; rest is how many tools
	// are still to be done without the memo, nextRest the rest after the
	// next window with few hits.
	lookups, hits, rest, nextRest int
}

// memoTool is one remembered tool: its raw bytes text[off:off+n], where
// its schema lay in them (schemaOff -1 without one), its properties'
// classes labels[labelsOff:labelsOff+props], and its result.
type memoTool struct {
	off, n             uint32
	labelsOff, props   uint32
	schemaOff, schemaN int32
	res                toolResult
}

// The memo's bounds. 4 MiB of text holds the distinct definitions of the
// real-schema census with room.
const (
	memoBytes   = 4 << 20
	memoEntries = 1 << 15
	// memoMaxTool is the largest tool remembered: a rare giant definition
	// would crowd out thousands of ordinary ones.
	memoMaxTool    = 64 << 10
	memoWindow     = 1024
	memoMinHitRate = 8
	memoWarm       = 4 * memoWindow
	memoRest       = 16 * memoWindow
	memoMaxRest    = 256 * memoWindow
)

// lookup returns the remembered result and property classes of t, or
// ok false; a miss that may be remembered returns the key to pass to add
// (remember true).
func (m *toolMemo) lookup(t *census.Tool) (res *toolResult, labels []classify.Set, key uint64, remember bool) {
	raw := t.Raw
	if m.rest > 0 {
		m.rest--
		return nil, nil, 0, false
	}
	schemaOff := schemaAt(t)
	if len(raw) > memoMaxTool || (t.Schema != nil && schemaOff < 0) {
		return nil, nil, 0, false
	}
	if m.lookups++; m.lookups == memoWindow {
		few := m.hits*memoMinHitRate < m.lookups
		m.lookups, m.hits = 0, 0
		switch {
		case few && len(m.entries) >= memoWarm:
			if m.nextRest == 0 {
				m.nextRest = memoRest
			}
			m.rest = m.nextRest
			m.nextRest = min(2*m.nextRest, memoMaxRest)
			m.clear()
			return nil, nil, 0, false
		case !few:
			// Tools repeat: the next rest, if any, starts short again.
			m.nextRest = 0
		}
	}
	if m.index == nil {
		m.seed = maphash.MakeSeed()
		m.index = make(map[uint64]uint32, 1024)
	}
	key = maphash.Bytes(m.seed, raw)
	if i, ok := m.index[key]; ok {
		if e := &m.entries[i]; int(e.n) == len(raw) && int(e.schemaOff) == schemaOff &&
			int(e.schemaN) == len(t.Schema) && int(e.props) == len(t.Properties) &&
			bytes.Equal(m.text[e.off:e.off+e.n], raw) {
			m.hits++
			return &e.res, m.labels[e.labelsOff : e.labelsOff+e.props], key, false
		}
	}
	return nil, nil, key, true
}

// add remembers t's result and property classes under key, from lookup.
func (m *toolMemo) add(t *census.Tool, key uint64, res toolResult, labels []classify.Set) {
	if len(m.text)+len(t.Raw) > memoBytes || len(m.entries) >= memoEntries || len(m.labels)+len(labels) > memoEntries*16 {
		m.clear()
	}
	m.index[key] = uint32(len(m.entries))
	m.entries = append(m.entries, memoTool{
		off: uint32(len(m.text)), n: uint32(len(t.Raw)),
		labelsOff: uint32(len(m.labels)), props: uint32(len(labels)),
		schemaOff: int32(schemaAt(t)), schemaN: int32(len(t.Schema)),
		res: res,
	})
	m.text = append(m.text, t.Raw...)
	m.labels = append(m.labels, labels...)
}

// clear forgets every tool and keeps the buffers, so that a memo that
// starts again does not grow them anew.
func (m *toolMemo) clear() {
	clear(m.index)
	m.entries, m.text, m.labels = m.entries[:0], m.text[:0], m.labels[:0]
}

// schemaAt is the offset of t.Schema within t.Raw, or -1 without a schema
// or when it lies outside Raw (never so from the decoder).
func schemaAt(t *census.Tool) int {
	b, sub := t.Raw, t.Schema
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
