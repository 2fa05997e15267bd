package census

import (
	"bytes"
	"hash/maphash"
	"sync/atomic"
	"unsafe"
)

// Remembering tool texts.
//
// A census serves one definition many times over (forks, mirrors,
// aggregators: the bundled real tools resampled onto the snapshot's
// 229,539 tools hold 4,768 distinct definitions). A Decoder told to
// RememberTools keeps, for each tool object it parsed, its text and what
// it decoded from it, and when the same bytes stand at the start of a later
// tool object at the same depth it takes the tool from memory instead of
// parsing it: the bytes are compared, not parsed.
//
// That is exact because a valid JSON object is self-delimiting: its parse
// depends only on the bytes it has consumed, so text that parsed as one
// whole object parses as that same object wherever it stands, ending at the
// same last byte, with the same errors (none) and, nested as deep, the same
// depth limits. Everything decoded from a tool object is a function of its
// text: the properties, their order and required flags, the schema's place
// in it. Only where it stands in the line (Offset) and the line bytes that
// Raw, Schema and unescaped strings alias are taken from the line at hand.
//
// A lookup hashes the object's first bytes (up to memoKeyLen, cut after
// the first '}', which is never past the object's end) with its depth, and
// compares the remembered texts filed at that key's slot, newest first, each
// in full against the line: a collision costs a comparison, never a wrong
// tool. Finding the object's end first, to hash all of it, would cost a
// scan of every byte, about what parsing a tool costs; variants of a tool
// that share its first bytes share a key instead, and a lookup compares at
// most memoChain of them.
//
// Every tool the memory holds has a TextID, which consumers use to keep
// what they compute from a text once per text (TextResults), instead of
// each hashing and comparing tool texts again.
//
// The memory is bounded (memoBytes of text, memoEntries tools,
// memoProps properties) and starts afresh when full, but never in the
// middle of a line: the tools of the line being decoded may alias it.
// Where tools do not repeat, remembering is pure cost, so a window of
// memoWindow lookups with fewer than one hit in memoMinHitRate, once
// memoWarm tools are held, rests it for a number of tools that doubles
// with each such window in a row (memoRest up to memoMaxRest).

// The memory's bounds, per Decoder. 4 MiB of text holds the distinct
// definitions of the real-schema census with room.
const (
	memoBytes   = 4 << 20
	memoEntries = 1 << 15
	memoProps   = 1 << 17
	// memoMaxTool is the largest tool remembered: a rare giant definition
	// would crowd out thousands of ordinary ones.
	memoMaxTool = 64 << 10
	// memoKeyLen is how much of an object's start the key hashes, and
	// memoChain how many remembered texts of one key a lookup compares.
	memoKeyLen = 64
	memoChain  = 8
	// memoSlots is the number of chain heads, a power of two: twice the
	// entries, so that keys seldom share a chain.
	memoSlots      = 2 * memoEntries
	memoWindow     = 1024
	memoMinHitRate = 8
	memoWarm       = 4 * memoWindow
	memoRest       = 16 * memoWindow
	memoMaxRest    = 256 * memoWindow
)

// TextID names one tool text of those a Decoder remembers. Two tools with
// the same non-zero TextID have byte-identical Raw, decoded alike; the
// zero TextID names nothing (the tool was not remembered). IDs are unique
// across decoders and across each decoder's fresh starts.
type TextID struct {
	gen uint64
	n   uint32 // the entry's index plus one
}

// memoGens hands out the generations of the memories of every Decoder, so
// that a TextID from one memory never names a text of another.
var memoGens atomic.Uint64

// RememberTools makes d remember the tool objects it parses and give each
// remembered tool a TextID (see the package's notes on remembering). It
// costs up to about 10 MiB per Decoder; the tools it gives are the same as
// without it, TextID aside.
func (d *Decoder) RememberTools() {
	d.memo.on = true
}

// memoStr is a decoded string of a remembered tool: nil, a part of the
// tool's raw text (a string without escapes, as the decoder aliases it),
// or unescaped bytes kept in the memory's text.
type memoStr struct {
	off, n uint32
	kind   uint8
}

const (
	strNil uint8 = iota
	strRaw
	strOwn
)

// memoProp is a remembered Property.
type memoProp struct {
	name, desc, defKey memoStr
	required           bool
	where              WhereKind
}

// memoTool is one remembered tool: its raw text text[off:off+n], the
// depth it was parsed at, and what it decoded to.
type memoTool struct {
	next, off, n       uint32
	depth              int32
	name, desc         memoStr
	hasName, hasDesc   bool
	schemaOff, schemaN int32 // schemaOff -1 without a schema
	propsOff, propsN   uint32
}

// toolMemo is a Decoder's memory of tool texts.
type toolMemo struct {
	on   bool
	seed maphash.Seed
	gen  uint64
	// heads holds, at a key's slot (its low bits), the newest entry
	// filed there, plus one; keys that share a slot share its chain.
	heads   []uint32
	entries []memoTool
	text    []byte
	props   []memoProp
	// full is set when a tool did not fit: the memory starts afresh at
	// the next line.
	full bool
	// lookups and hits count the current window; rest is how many tools
	// are still to be parsed without the memory, nextRest the rest after
	// the next window with few hits.
	lookups, hits, rest, nextRest int
}

// lookup returns the remembered tool whose text stands at data[p:] at
// depth, or nil; key is the lookup's key for add, and remember says
// whether a tool parsed there may be added.
func (m *toolMemo) lookup(data []byte, p, depth int) (e *memoTool, idx int, key uint64, remember bool) {
	if m.rest > 0 {
		m.rest--
		return nil, 0, 0, false
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
			// The tools of the line at hand may alias the memory.
			m.full = true
			return nil, 0, 0, false
		case !few:
			// Tools repeat: the next rest, if any, starts short again.
			m.nextRest = 0
		}
	}
	if m.heads == nil {
		m.seed = maphash.MakeSeed()
		m.heads = make([]uint32, memoSlots)
	}
	rest := data[p:]
	key = maphash.Bytes(m.seed, keyBytes(rest)) ^ uint64(depth)*0x9e3779b97f4a7c15
	i := m.heads[key&(memoSlots-1)]
	for range memoChain {
		if i == 0 {
			break
		}
		e := &m.entries[i-1]
		if int(e.depth) == depth && int(e.n) <= len(rest) && bytes.Equal(rest[:e.n], m.text[e.off:e.off+e.n]) {
			m.hits++
			return e, int(i - 1), key, false
		}
		i = e.next
	}
	return nil, 0, key, !m.full
}

// keyBytes is the part of an object's start that its key hashes: its
// first memoKeyLen bytes, cut after the first '}', which is at or before
// the object's end, so that the key of a short object does not depend on
// what follows it in the line.
func keyBytes(rest []byte) []byte {
	k := rest[:min(len(rest), memoKeyLen)]
	if i := bytes.IndexByte(k, '}'); i >= 0 {
		k = k[:i+1]
	}
	return k
}

// add remembers t, just parsed at depth, under key, and gives it its
// TextID. A tool that does not fit is not remembered, and the memory
// starts afresh at the next line.
func (m *toolMemo) add(t *Tool, key uint64, depth int) {
	raw := t.Raw
	if len(raw) > memoMaxTool {
		return
	}
	if len(m.text)+2*len(raw) > memoBytes || len(m.entries) >= memoEntries || len(m.props)+len(t.Properties) > memoProps {
		m.full = true
		return
	}
	if m.gen == 0 {
		m.gen = memoGens.Add(1)
	}
	m.text = grow(m.text, 2*len(raw), memoBytes)
	m.props = grow(m.props, len(t.Properties), memoProps)
	m.entries = grow(m.entries, 1, memoEntries)
	e := memoTool{
		next: m.heads[key&(memoSlots-1)], off: uint32(len(m.text)), n: uint32(len(raw)), depth: int32(depth),
		hasName: t.HasName, hasDesc: t.HasDescription, schemaOff: -1,
		propsOff: uint32(len(m.props)), propsN: uint32(len(t.Properties)),
	}
	m.text = append(m.text, raw...)
	e.name, e.desc = m.keep(t.Name, raw), m.keep(t.Description, raw)
	if t.Schema != nil {
		e.schemaOff, e.schemaN = int32(within(raw, t.Schema)), int32(len(t.Schema))
	}
	for i := range t.Properties {
		p := &t.Properties[i]
		m.props = append(m.props, memoProp{
			name: m.keep(p.Name, raw), desc: m.keep(p.Description, raw), defKey: m.keep(p.DefKey, raw),
			required: p.Required, where: p.Where,
		})
	}
	m.entries = append(m.entries, e)
	m.heads[key&(memoSlots-1)] = uint32(len(m.entries))
	t.Text = TextID{m.gen, uint32(len(m.entries))}
}

// grow makes room for n more elements by doubling, up to limit elements
// unless more are needed: append's own growth of a large slice (by a
// quarter) would copy, and fault in, about five times the memory the slice
// ends with, and slices.Grow writes zeroes over all the new room. The room
// of a new array is left as the allocator gives it: fresh memory is not
// touched until it is filled.
func grow[S ~[]E, E any](s S, n, limit int) S {
	if cap(s)-len(s) >= n {
		return s
	}
	c := max(len(s)+n, min(max(2*cap(s), 1024), limit))
	ns := make(S, len(s), c)
	copy(ns, s)
	return ns
}

// keep remembers s, a string decoded from raw.
func (m *toolMemo) keep(s, raw []byte) memoStr {
	if s == nil {
		return memoStr{}
	}
	if off := within(raw, s); off >= 0 {
		return memoStr{off: uint32(off), n: uint32(len(s)), kind: strRaw}
	}
	off := len(m.text)
	m.text = append(m.text, s...)
	return memoStr{off: uint32(off), n: uint32(len(s)), kind: strOwn}
}

// str gives back a remembered string for a tool whose text is raw.
func (m *toolMemo) str(s memoStr, raw []byte) []byte {
	switch s.kind {
	case strRaw:
		return raw[s.off : s.off+s.n : s.off+s.n]
	case strOwn:
		return m.text[s.off : s.off+s.n : s.off+s.n]
	}
	return nil
}

// clear forgets every tool. A full memory keeps its buffers for the
// tools to come (the arenas' retain bounds do not apply: the memory's own
// bounds are lower); a resting one gives them back, since a census whose
// tools do not repeat would only carry them, through its largest record
// too.
func (m *toolMemo) clear() {
	if m.rest > 0 {
		m.heads, m.entries, m.text, m.props = nil, nil, nil, nil
	} else {
		clear(m.heads)
		m.entries, m.text, m.props = m.entries[:0], m.text[:0], m.props[:0]
	}
	m.gen, m.full = 0, false
}

// within is the offset of sub within b when sub is a part of b's memory
// (an empty sub may sit at b's end), else -1.
func within(b, sub []byte) int {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	if len(b) == 0 || p < start || p+uintptr(len(sub)) > start+uintptr(len(b)) {
		return -1
	}
	return int(p - start)
}

// recall appends the remembered tool e (entry idx), whose text stands at
// p in the line, to the tools arena, and returns the index just past it.
func (d *Decoder) recall(e *memoTool, idx, p int) int {
	m := &d.memo
	end := p + int(e.n)
	raw := d.lx.data[p:end:end]
	t := Tool{
		Name: m.str(e.name, raw), HasName: e.hasName,
		Description: m.str(e.desc, raw), HasDescription: e.hasDesc,
		Raw: raw, Offset: p, Text: TextID{m.gen, uint32(idx + 1)},
	}
	if e.schemaOff >= 0 {
		a, b := int(e.schemaOff), int(e.schemaOff+e.schemaN)
		t.Schema = raw[a:b:b]
	}
	if e.propsN > 0 {
		a := len(d.out)
		for _, mp := range m.props[e.propsOff : e.propsOff+e.propsN] {
			d.out = append(d.out, Property{
				Name: m.str(mp.name, raw), Description: m.str(mp.desc, raw), DefKey: m.str(mp.defKey, raw),
				Required: mp.required, Where: mp.where,
			})
		}
		t.Properties = d.out[a:len(d.out):len(d.out)]
	}
	d.tools = append(d.tools, t)
	return end
}

// TextResults keeps what a caller computes from tool texts alone (classes,
// hashes), one value per TextID, so that a census that serves one
// definition many times computes it once. It follows one Decoder's
// memory: when that starts afresh, or tools come from another Decoder, it
// forgets what it held. The zero value is ready to use; it is not safe for
// concurrent use.
type TextResults[T any] struct {
	gen  uint64
	vals []T
	have []bool
}

// Len is how many values it keeps.
func (r *TextResults[T]) Len() int {
	n := 0
	for _, h := range r.have {
		if h {
			n++
		}
	}
	return n
}

// Get returns the value kept for t's text, if any.
func (r *TextResults[T]) Get(t *Tool) (*T, bool) { return r.GetText(t.Text) }

// GetText returns the value kept for the tool text id, if any: for a
// caller that completes a kept value after the decoder has moved on from
// its tool.
func (r *TextResults[T]) GetText(id TextID) (*T, bool) {
	if id.n == 0 || id.gen != r.gen || int(id.n) > len(r.vals) || !r.have[id.n-1] {
		return nil, false
	}
	return &r.vals[id.n-1], true
}

// Put keeps v for t's text; a tool the decoder did not remember is
// passed over.
func (r *TextResults[T]) Put(t *Tool, v T) {
	id := t.Text
	if id.n == 0 {
		return
	}
	if id.gen != r.gen {
		// Zeroed, the old values hold no memory, and the slots that
		// are taken again start empty.
		clear(r.vals)
		clear(r.have)
		r.gen, r.vals, r.have = id.gen, r.vals[:0], r.have[:0]
	}
	i := int(id.n - 1)
	if len(r.vals) <= i {
		r.vals, r.have = grow(r.vals, i+1-len(r.vals), memoEntries), grow(r.have, i+1-len(r.have), memoEntries)
		r.vals, r.have = r.vals[:i+1], r.have[:i+1]
	}
	r.vals[i], r.have[i] = v, true
}
