package census

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// The canonicaliser's fast path reads the text once into a tape of items
// (each token's place in the text; each object's members put in
// canonical order as it closes, which moves only their items) and then
// writes the canonical form from the tape in one pass: a string or number
// is read once and copied once. The general path (object and order)
// writes each object's members in text order and, when they are out of
// canonical order, moves the object's whole text through tmp and back, so
// that the text of a value nested n objects deep is copied up to 2n more
// times; census tools are out of order at most levels ("name" before
// "description", "type" before "description").
//
// The fast path only has to know valid text when it sees it: at the first
// byte it does not expect it gives up, having written nothing, and the
// general path, which stays for that, reads the text again and fails with
// CPython's message at CPython's offset. TestCanonicalPaths and
// FuzzCanonicalPaths hold the two paths to the same output.

// canonItem is a value of the tape and, for a member of an object, its
// key. Positions are int32 to keep items small (the tape takes texts up
// to tapeLimit).
type canonItem struct {
	// kp is the decoded key's first 8 bytes, big-endian, zero-padded: two
	// keys whose prefixes differ and are ASCII are ordered by them.
	kp uint64
	// ka, kb: the member's decoded key, data[ka:kb] (the text between
	// the quotes) or, with kesc, keys[ka:kb].
	ka, kb int32
	// a, b: a token's range in data (quotes included), or a container's
	// children done[a:b].
	a, b int32
	kind canonKind
	kesc bool
}

// canonKind is what an item's range holds and how it is written.
type canonKind uint8

const (
	// kindRaw is copied as it stands: a literal, a string without
	// escapes, a number already in Number::toString's spelling.
	kindRaw canonKind = iota
	kindString
	kindNumber
	kindObject
	kindArray
)

// canonFrame is an open container of the tape: its item is
// stack[base-1] and its children are stack[base:].
type canonFrame struct {
	base    int
	obj     bool
	ordered bool // the members so far have ascending keys
}

// tapeLimit is the longest text the tape takes; a longer one (hardly any
// tool is that long) takes the general path. The tape holds 32 bytes an
// item, up to one item for every two bytes of text ([1,1,1,...]): the
// limit bounds it at 4 MiB, and keeps positions well within int32.
const tapeLimit = 256 << 10

// tapeRetainItems is the most items of tape a pooled canonicalizer keeps
// between texts (128 KiB): a tool has a few hundred, and a rare giant one
// should not leave each pooled canonicalizer holding megabytes.
const tapeRetainItems = 1 << 12

// tape is top for the fast path. It reports false, having written
// nothing, for text it leaves to the general path: any text CPython would
// reject (the general path finds the error Python reports) and the valid
// text past tapeLimit.
func (c *canonicalizer) tape(dst []byte) ([]byte, bool) {
	data := c.lx.data
	n := len(data)
	if n > tapeLimit {
		return dst, false
	}
	c.stack = append(c.stack[:0], canonItem{}) // the top-level value's
	c.done, c.frames = c.done[:0], c.frames[:0]
	p, ok := c.tapeValue(skipWS(data, 0), MaxDepth)
	if !ok || skipWS(data, p) != n {
		return dst, false
	}
	if top := &c.stack[0]; top.kind == kindObject || top.kind == kindArray {
		return c.emitContainer(slices.Grow(dst, n), top, c.findSchema), true
	}
	return c.emitScalar(dst, &c.stack[0]), true
}

// tapeValue reads the value at p onto the tape: its item is the stack's
// last, and it is nested in len(c.frames) open containers, which it
// leaves open. It returns the position past the value, or false, with the
// tape in disorder, at the first byte it does not expect and where the
// value would open more than maxFrames containers in all.
//
// Each value has its item on the stack from the start, a member's with
// its key, so that the item is written in place; a closed container's
// children move from the stack to done, in canonical order.
func (c *canonicalizer) tapeValue(p, maxFrames int) (int, bool) {
	data := c.lx.data
	n := len(data)
	// Local slices, kept in registers (a deferred save would pin them
	// to memory); the grown ones are kept on success.
	stack, done, frames := c.stack, c.done, c.frames
	base := len(frames)
	var ok bool
	for {
		// p is at a value, whose item is the stack's last.
		if p >= n {
			return p, false
		}
		it := &stack[len(stack)-1]
		switch ch := data[p]; ch {
		case '"':
			var end int
			var esc, sok bool
			if c.trusted {
				end, esc, sok = trustedString(data, p)
			} else {
				end, esc, sok = tapeString(data, p)
			}
			if !sok {
				return p, false
			}
			it.a, it.b = int32(p), int32(end)
			if esc {
				it.kind = kindString
			}
			p = end
		case '{', '[':
			if len(frames) >= maxFrames {
				return p, false
			}
			it.kind = kindArray
			if ch == '{' {
				it.kind = kindObject
			}
			q := skipWS(data, p+1)
			if q < n && data[q] == ch+2 { // empty
				it.a, it.b = int32(len(done)), int32(len(done))
				p = q + 1
				break
			}
			frames = append(frames, canonFrame{base: len(stack), obj: ch == '{', ordered: true})
			stack = append(stack, canonItem{})
			p = q
			if ch == '{' {
				if p, ok = c.tapeKey(p, &stack[len(stack)-1]); !ok {
					return p, false
				}
			}
			continue
		case 't', 'f', 'n':
			end := p + 4
			if ch == 'f' {
				end++
			}
			if end > n || !c.trusted && string(data[p:end]) != "true" && string(data[p:end]) != "false" && string(data[p:end]) != "null" {
				return p, false
			}
			it.a, it.b = int32(p), int32(end)
			p = end
		case 'N', 'I':
			end := p + 3
			if ch == 'I' {
				end += 5
			}
			if end > n || !c.trusted && string(data[p:end]) != "NaN" && string(data[p:end]) != "Infinity" {
				return p, false
			}
			it.a, it.b = int32(p), int32(end)
			p = end
		default:
			if ch == '-' && p+1 < n && data[p+1] == 'I' {
				if p+9 > n || string(data[p:p+9]) != "-Infinity" {
					return p, false
				}
				it.a, it.b = int32(p), int32(p+9)
				p += 9
				break
			}
			end, kind, nok := tapeNumber(data, p)
			if !nok {
				return p, false
			}
			it.a, it.b, it.kind = int32(p), int32(end), kind
			p = end
		}
		// A value has ended: step past a comma to the next, or close
		// containers.
		for {
			if len(frames) == base {
				c.stack, c.done, c.frames = stack, done, frames
				return p, true
			}
			if p = skipWS(data, p); p >= n {
				return p, false
			}
			f := &frames[len(frames)-1]
			if data[p] == ',' {
				p = skipWS(data, p+1)
				stack = append(stack, canonItem{})
				if f.obj {
					last := len(stack) - 1
					if p, ok = c.tapeKey(p, &stack[last]); !ok {
						return p, false
					}
					// Equal keys need the sort too, which keeps the last.
					if f.ordered && c.compareKeys(&stack[last-1], &stack[last]) >= 0 {
						f.ordered = false
					}
				}
				break
			}
			if f.obj {
				if data[p] != '}' {
					return p, false
				}
			} else if data[p] != ']' {
				return p, false
			}
			p++
			stack, done, frames = c.closeFrame(stack, done, frames)
		}
	}
}

// closeFrame closes the innermost open container of the tape: its
// children, an object's put in canonical order, move from the stack to
// done, where its item points.
func (c *canonicalizer) closeFrame(stack, done []canonItem, frames []canonFrame) ([]canonItem, []canonItem, []canonFrame) {
	f := &frames[len(frames)-1]
	ms := stack[f.base:]
	if f.obj && !f.ordered {
		ms = ms[:c.sortMembers(ms)]
	}
	it := &stack[f.base-1]
	it.a = int32(len(done))
	done = append(done, ms...)
	it.b = int32(len(done))
	return stack[:f.base], done, frames[:len(frames)-1]
}

// tapeKey reads the member name at p and the colon after it into the
// key fields of it, and returns the position of the value.
func (c *canonicalizer) tapeKey(p int, it *canonItem) (int, bool) {
	data := c.lx.data
	if p >= len(data) || data[p] != '"' {
		return p, false
	}
	if p+9 <= len(data) {
		// Most keys are short: a closing quote within the eight bytes
		// after the opening one, the first special byte among them,
		// ends a key without escapes, and they are its prefix.
		w := binary.LittleEndian.Uint64(data[p+1:])
		var m uint64
		if c.trusted {
			m = quoteMask(w)
		} else {
			m = specialMask(w)
		}
		if m != 0 {
			if i := bits.TrailingZeros64(m) >> 3; data[p+1+i] == '"' {
				it.ka, it.kb = int32(p+1), int32(p+1+i)
				it.kp = bits.ReverseBytes64(w) &^ (math.MaxUint64 >> (8 * i))
				v := skipWS(data, p+2+i)
				if v >= len(data) || data[v] != ':' {
					return v, false
				}
				return skipWS(data, v+1), true
			}
		}
	}
	var end int
	var esc, ok bool
	if c.trusted {
		end, esc, ok = trustedString(data, p)
	} else {
		end, esc, ok = tapeString(data, p)
	}
	if !ok {
		return p, false
	}
	c.setKey(it, p, end, esc)
	v := skipWS(data, end)
	if v >= len(data) || data[v] != ':' {
		return v, false
	}
	return skipWS(data, v+1), true
}

// tapeString is scanString for the tape: it finds the end of the string
// whose quote is at q and whether it holds an escape, and reports false
// where scanString fails (the tape then gives the text to the general
// path, which reports the error).
func tapeString(data []byte, q int) (int, bool, bool) {
	end, esc, err := scanString(data, q)
	return end, esc, err == nil
}

// tapeNumber reads the number at p as scanNumber does and says how it is
// written; it reports false for anything else and for a number CPython
// would not read. Text like 01, 1. or 1e+ that it reads in part fails in
// tape, where the byte after the number is no comma, bracket or
// whitespace.
func tapeNumber(data []byte, p int) (int, canonKind, bool) {
	n := len(data)
	start := p
	if data[p] == '-' {
		if p++; p >= n {
			return p, 0, false
		}
	}
	intStart := p
	switch c := data[p]; {
	case c == '0':
		p++
	case c >= '1' && c <= '9':
		p++
		for p < n && isDigit[data[p]] {
			p++
		}
	default:
		return p, 0, false
	}
	intDigits := p - intStart
	isInt := true
	if p < n && data[p] == '.' {
		if p++; p >= n || !isDigit[data[p]] {
			return p, 0, false
		}
		for p < n && isDigit[data[p]] {
			p++
		}
		isInt = false
	}
	if p < n && (data[p] == 'e' || data[p] == 'E') {
		if p++; p < n && (data[p] == '+' || data[p] == '-') {
			p++
		}
		if p >= n || !isDigit[data[p]] {
			return p, 0, false
		}
		for p < n && isDigit[data[p]] {
			p++
		}
		isInt = false
	}
	if !isInt {
		return p, kindNumber, true
	}
	if intDigits > MaxIntDigits {
		return p, 0, false
	}
	if canonicalInt(data[start:p]) {
		return p, kindRaw, true
	}
	return p, kindNumber, true
}

// compareKeys orders two members' keys as compareUTF16 does, from their
// prefixes when these differ and are ASCII, where byte order is unit
// order; it is small enough to be inlined in the sort.
func (c *canonicalizer) compareKeys(x, y *canonItem) int {
	if a, b := x.kp, y.kp; a != b && (a|b)&0x8080808080808080 == 0 {
		if a < b {
			return -1
		}
		return 1
	}
	return c.compareKeyText(x, y)
}

// compareKeyText is compareKeys from the keys themselves.
func (c *canonicalizer) compareKeyText(x, y *canonItem) int {
	return compareUTF16(c.key(x), c.key(y))
}

// key is the decoded key of a member item.
func (c *canonicalizer) key(it *canonItem) []byte {
	if it.kesc {
		return c.keys[it.ka:it.kb]
	}
	return c.lx.data[it.ka:it.kb]
}

// sortMembers sorts an object's members by key, stably, and keeps the
// last of each key; it returns how many are left, at the front of ms.
func (c *canonicalizer) sortMembers(ms []canonItem) int {
	dup := false
	if len(ms) <= 16 {
		// An insertion sort with the comparison inline beats the
		// generic sort's calls through a closure on the few members
		// most objects have. A member moving down meets an equal key
		// earlier in the text, if there is one: dup is exact.
		for i := 1; i < len(ms); i++ {
			m := ms[i]
			j := i
			for ; j > 0; j-- {
				r := c.compareKeys(&ms[j-1], &m)
				if r <= 0 {
					dup = dup || r == 0
					break
				}
				ms[j] = ms[j-1]
			}
			ms[j] = m
		}
	} else {
		slices.SortStableFunc(ms, func(x, y canonItem) int { return c.compareKeys(&x, &y) })
		dup = true
	}
	if !dup {
		return len(ms)
	}
	// Equal decoded keys are equal bytes.
	w := 0
	for i := range ms {
		if i+1 < len(ms) && string(c.key(&ms[i])) == string(c.key(&ms[i+1])) {
			continue
		}
		ms[w] = ms[i]
		w++
	}
	return w
}

// emitScalar writes a string, number or literal of the tape.
func (c *canonicalizer) emitScalar(dst []byte, it *canonItem) []byte {
	data := c.lx.data
	switch it.kind {
	case kindString:
		return appendEscapedCanonical(dst, data[it.a+1:it.b-1])
	case kindNumber:
		return appendNumber(dst, parseDouble(data[it.a:it.b], &c.pbuf), &c.num)
	}
	return append(dst, data[it.a:it.b]...)
}

// emitContainer writes an object or array of the tape. With tool (the
// top-level object of AppendCanonicalTool) it notes where the values of
// inputSchema and input_schema are written.
func (c *canonicalizer) emitContainer(dst []byte, it *canonItem, tool bool) []byte {
	data, done := c.lx.data, c.done
	if it.kind == kindArray {
		dst = append(dst, '[')
		for i := it.a; i < it.b; i++ {
			if i > it.a {
				dst = append(dst, ',')
			}
			if m := &done[i]; m.kind == kindRaw {
				dst = appendShort(dst, data, m.a, m.b)
			} else {
				dst = c.emitValue(dst, m)
			}
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i := it.a; i < it.b; i++ {
		if i > it.a {
			dst = append(dst, ',')
		}
		m := &done[i]
		if m.kesc {
			dst = c.appendDecoded(dst, c.keys[m.ka:m.kb])
		} else {
			dst = appendShort(dst, data, m.ka-1, m.kb+1) // with its quotes
		}
		dst = append(dst, ':')
		at := len(dst)
		if m.kind == kindRaw {
			dst = appendShort(dst, data, m.a, m.b)
		} else {
			dst = c.emitValue(dst, m)
		}
		if tool {
			switch string(c.key(m)) {
			case "inputSchema":
				c.schemaA, c.schemaB = at, len(dst)
			case "input_schema":
				c.aliasA, c.aliasB = at, len(dst)
			}
		}
	}
	return append(dst, '}')
}

// appendShort appends data[a:b] to dst, in one sixteen-byte move, without
// a call, when it is that short and both sides have the room (past dst's
// length, in its capacity, the move's tail is overwritten later).
func appendShort(dst, data []byte, a, b int32) []byte {
	w, l := len(dst), int(b-a)
	if l <= 16 && int(a)+16 <= len(data) && w+16 <= cap(dst) {
		*(*[16]byte)(dst[w : w+16]) = *(*[16]byte)(data[a : a+16])
		return dst[:w+l]
	}
	return append(dst, data[a:b]...)
}

// emitValue writes an item of the tape that is not raw text, which
// emitContainer copies itself.
func (c *canonicalizer) emitValue(dst []byte, m *canonItem) []byte {
	if m.kind == kindObject || m.kind == kindArray {
		return c.emitContainer(dst, m, false)
	}
	return c.emitScalar(dst, m)
}

// appendEscapedCanonical writes the canonical form of the content of a
// string with escapes, as appendDecoded writes appendUnescaped's decoding
// of it, in one pass: the text between escapes is already canonical (see
// appendString), and each escape is decoded and written as JCS writes its
// character.
func appendEscapedCanonical(dst, raw []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		switch e := raw[i+1]; e {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			dst = append(dst, '\\', e) // JCS writes these five the same way
		case '/':
			dst = append(dst, '/')
		case 'u':
			// A high surrogate escape right before a low one is a
			// pair, as appendUnescaped reads it.
			var r rune
			r, i = unicodeEscape(raw, i)
			dst = appendCanonicalRune(dst, r)
			continue
		}
		i += 2
	}
	return append(dst, '"')
}

// appendCanonicalRune writes the character of a \u escape (or a pair of
// them) as appendDecoded writes it.
func appendCanonicalRune(dst []byte, r rune) []byte {
	switch {
	case r == '"' || r == '\\':
		return append(dst, '\\', byte(r))
	case r >= 0x20 && r < utf8.RuneSelf:
		return append(dst, byte(r))
	case r < 0x20:
		switch r {
		case '\b':
			return append(dst, '\\', 'b')
		case '\f':
			return append(dst, '\\', 'f')
		case '\n':
			return append(dst, '\\', 'n')
		case '\r':
			return append(dst, '\\', 'r')
		case '\t':
			return append(dst, '\\', 't')
		}
		return append(dst, '\\', 'u', '0', '0', hexLower[r>>4], hexLower[r&0xf])
	case r >= 0xd800 && r < 0xe000:
		// A lone surrogate.
		return append(dst, '\\', 'u', hexLower[r>>12], hexLower[r>>8&0xf], hexLower[r>>4&0xf], hexLower[r&0xf])
	}
	return utf8.AppendRune(dst, r)
}

// canonicalInt says whether an integer literal scanNumber accepted is
// already spelt as Number::toString spells its double, so that it can be
// copied: one of at most 2^53 in magnitude is a double exactly and
// written as its digits (JSON allows no leading zero but 0 itself),
// except -0, written 0.
func canonicalInt(lit []byte) bool {
	digits := lit
	if lit[0] == '-' {
		digits = lit[1:]
		if len(digits) == 1 && digits[0] == '0' {
			return false
		}
	}
	// 2^53 has 16 digits; digit strings of one length compare as their
	// numbers do.
	return len(digits) < 16 || len(digits) == 16 && string(digits) <= "9007199254740992"
}
