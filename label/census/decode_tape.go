package census

import (
	"encoding/binary"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"
)

// The canonical form from the decoder's parse.
//
// The definition hash canonicalises every tool the decoder gives, and the
// canonicaliser's fast path (canon_tape.go) reads the text into a tape of
// items before it writes the canonical form from it: a second reading of
// text the decoder has just read. So the decoder records the tape as it
// parses a tool: each token its walk meets (through the helpers below,
// which every parser of a tool's members calls instead of the Lexer's
// methods) puts its item on the tape, and what the walk skips is read by
// the tape's own loop (tapeValue), which validates as Lexer.Skip does and
// leaves to Skip, for its error, any value it does not take. Its tape done,
// a tool carries where it lies, and AppendCanonicalDecoded writes the
// canonical form from it without reading the text again.
//
// The tape is the line's: it is valid until the next Decode or Stream
// (tapeGen tells a Tool of an earlier line), and it is kept only for lines
// shorter than tapeLineLimit, which Stream decodes in one pass: a long line
// Stream reads in two passes, one tool per Next, has none, and nor has a
// tool the decoder takes from memory (RememberTools); their canonical form
// is read from the text, as before. Nor has the tool of a flat record,
// which is the record itself, read by the record's walk.

// A caller that never asks for the canonical form (a decoder that only
// classifies) would pay for the tape for nothing: about a third more CPU
// to decode (BenchmarkDecodeTapeCost). So the decoder counts, window by
// window of at least tapeWindow taped tools (closed between lines, since
// a caller writes a line's tools after the decoder has taped them all),
// how many were written from the tape, and where fewer than a quarter
// were it stops taping for the next tapeRest tools: such a caller pays
// for about one window in tapeRest.

// tapeWindow is how many taped tools the decoder counts uses over, and
// tapeRest how many tools it then parses without the tape when too few
// were used.
const (
	tapeWindow = 256
	tapeRest   = 1 << 14
)

// tapeUse is the decoder's count of its tape's use.
type tapeUse struct {
	taped int          // tools taped in this window
	rest  int          // tools to parse without the tape
	used  atomic.Int64 // tools written from the tape; the writers may be other goroutines
}

// tapeLineLimit is the longest line whose tools are taped: positions in
// the tape are int32, and the tape (32 bytes an item, up to one item for
// every two bytes of text) stays within 16 times the line. It is Stream's
// threshold for two passes.
const tapeLineLimit = streamAbove

// toolTape is where a tool's tape lies: d.tc.done[at-1] is its item when
// d is on line gen.
type toolTape struct {
	d   *Decoder
	gen uint64
	at  int32
}

// tapeReset starts the tape of a new line.
func (d *Decoder) tapeReset(line []byte) {
	// The window closes between lines: a caller writes a line's tools
	// after the decoder has taped them all, before the next line.
	if u := &d.tapeUse; u.taped >= tapeWindow {
		if u.used.Swap(0)*4 < int64(u.taped) {
			u.rest = tapeRest
		}
		u.taped = 0
	}
	d.tapeGen++
	d.taping = false
	d.tapeOn = len(line) < tapeLineLimit && !d.noTape
	c := &d.tc
	c.lx.data = line
	c.stack = retain(c.stack, retainItems)
	c.done = retain(c.done, retainItems)
	c.frames = retain(c.frames, retainItems)
	c.keys = retain(c.keys, retainBytes)
}

// tapeStart starts the tape of a tool object held by a container at
// depth: its item is the stack's first.
func (d *Decoder) tapeStart(depth int) {
	d.taping = d.tapeOn
	if !d.taping {
		return
	}
	if u := &d.tapeUse; u.rest > 0 {
		u.rest--
		d.taping = false
		return
	}
	c := &d.tc
	c.stack = append(c.stack[:0], canonItem{})
	c.frames = c.frames[:0]
	// The tape's loop opens containers up to MaxDepth in all, the
	// tool's among them, as the decoder's Skip does.
	d.tapeMax = MaxDepth - depth
}

// tapeEnd keeps the tape of the tool just parsed, t.
func (d *Decoder) tapeEnd(t *Tool) {
	d.taping = false
	c := &d.tc
	if len(c.stack) != 1 || len(c.frames) != 0 || c.stack[0].kind != kindObject {
		return // not reached: every token was taped
	}
	c.done = append(c.done, c.stack[0])
	t.tape = toolTape{d, d.tapeGen, int32(len(c.done))}
	d.tapeUse.taped++
}

// objOpen is Lexer.ObjOpen, taped.
func (d *Decoder) objOpen(p int) (int, bool) {
	q, empty := d.lx.ObjOpen(p)
	if d.taping {
		d.tapeOpen(kindObject, empty)
	}
	return q, empty
}

// arrOpen is Lexer.ArrOpen, taped.
func (d *Decoder) arrOpen(p int) (int, bool) {
	q, empty := d.lx.ArrOpen(p)
	if d.taping {
		d.tapeOpen(kindArray, empty)
	}
	return q, empty
}

// tapeOpen opens a container whose item is the stack's last.
func (d *Decoder) tapeOpen(kind canonKind, empty bool) {
	c := &d.tc
	it := &c.stack[len(c.stack)-1]
	it.kind = kind
	if empty {
		it.a, it.b = int32(len(c.done)), int32(len(c.done))
		return
	}
	// An object's members are sorted as it closes, without checking
	// first whether they are in order: the insertion sort of a few
	// members in order makes the comparisons the check would, and the
	// check's are saved where they are not (most objects of a tool).
	c.frames = append(c.frames, canonFrame{base: len(c.stack), obj: kind == kindObject})
	if kind == kindArray {
		c.stack = append(c.stack, canonItem{}) // the first element's
	}
}

// objNext is Lexer.ObjNext, taped: past the '}' the object closes.
func (d *Decoder) objNext(p int) (int, bool, error) {
	q, done, err := d.lx.ObjNext(p)
	if done && d.taping {
		c := &d.tc
		c.stack, c.done, c.frames = c.closeFrame(c.stack, c.done, c.frames)
	}
	return q, done, err
}

// arrNext is Lexer.ArrNext, taped: past a ',' the next element has its
// item, past the ']' the array closes.
func (d *Decoder) arrNext(p int) (int, bool, error) {
	q, done, err := d.lx.ArrNext(p)
	if err == nil && d.taping {
		c := &d.tc
		if done {
			c.stack, c.done, c.frames = c.closeFrame(c.stack, c.done, c.frames)
		} else {
			c.stack = append(c.stack, canonItem{})
		}
	}
	return q, done, err
}

// tapeKey puts a member on the tape, the name whose quotes are at p and
// end-1.
func (d *Decoder) tapeKey(p, end int, esc bool) {
	c := &d.tc
	c.stack = append(c.stack, canonItem{})
	c.setKey(&c.stack[len(c.stack)-1], p, end, esc)
}

// tapeString puts a string the decoder read, from p to end, in the
// stack's last item.
func (d *Decoder) tapeString(p, end int, esc bool) {
	it := &d.tc.stack[len(d.tc.stack)-1]
	it.a, it.b = int32(p), int32(end)
	if esc {
		it.kind = kindString
	}
}

// skip is Lexer.Skip, taped: the tape's own loop reads the value, and
// Skip reads it again, for its error, when the tape does not take it
// (the tool then has no tape).
func (d *Decoder) skip(p, depth int) (int, error) {
	if d.taping {
		if data := d.lx.data; p < len(data) && data[p] == '"' {
			// Most skipped values of a tool are strings ("type":
			// "string"): read as Skip reads them, without the loop.
			end, esc, err := scanString(data, p)
			if err == nil {
				d.tapeString(p, end, esc)
			}
			return end, err
		}
		if end, ok := d.tc.tapeValue(p, d.tapeMax); ok {
			return end, nil
		}
		d.taping = false
	}
	return d.lx.Skip(p, depth)
}

// setKey fills the key fields of it from the member name whose quotes are
// at p and end-1 in the text.
func (c *canonicalizer) setKey(it *canonItem, p, end int, esc bool) {
	data := c.lx.data
	var k []byte
	if esc {
		at := len(c.keys)
		c.keys = appendUnescaped(c.keys, data[p+1:end-1])
		it.ka, it.kb, it.kesc = int32(at), int32(len(c.keys)), true
		k = c.keys[at:]
	} else {
		it.ka, it.kb = int32(p+1), int32(end-1)
		k = data[p+1 : end-1]
	}
	switch {
	case len(k) >= 8:
		it.kp = binary.BigEndian.Uint64(k)
	case !esc && p+9 <= len(data):
		// The eight bytes from the key's start, past its end masked.
		it.kp = binary.BigEndian.Uint64(data[p+1:]) &^ (math.MaxUint64 >> (8 * len(k)))
	default:
		for i, b := range k {
			it.kp |= uint64(b) << (56 - 8*i)
		}
	}
}

// taped writes the canonical form of t from its decoder's tape, as
// AppendCanonicalTool writes it from t.Raw; it reports false when t has
// no tape of the line its decoder is on, or its Raw is not that line's.
func (c *canonicalizer) taped(dst []byte, t *Tool) (out []byte, a, b int, ok bool) {
	tp := &t.tape
	d := tp.d
	if d == nil || d.tapeGen != tp.gen {
		return dst, 0, 0, false
	}
	src := &d.tc
	line := src.lx.data
	if len(t.Raw) == 0 || t.Offset < 0 || t.Offset+len(t.Raw) > len(line) || unsafe.SliceData(t.Raw) != &line[t.Offset] {
		return dst, 0, 0, false
	}
	// The decoder's tape is only read: its tools may be written on
	// several goroutines at once.
	done, keys := c.done, c.keys
	c.lx.data, c.done, c.keys = line, src.done, src.keys
	c.schemaA, c.schemaB, c.aliasA, c.aliasB = 0, 0, 0, 0
	out = c.emitContainer(slices.Grow(dst, len(t.Raw)), &src.done[tp.at-1], true)
	c.done, c.keys = done, keys
	a, b = c.schemaA, c.schemaB
	if a == b || string(out[a:b]) == "null" {
		a, b = c.aliasA, c.aliasB
	}
	return out, a, b, true
}
