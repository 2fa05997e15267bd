package census

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// AppendCanonical appends to dst the canonical form of the JSON value raw
// by RFC 8785 (the JSON Canonicalization Scheme), so that two texts that
// differ only in key order, whitespace, escapes or number spelling give
// the same bytes, and a hash of them identifies the value:
//
//   - Objects: members sorted by their decoded keys compared as UTF-16 code
//     units; of duplicate keys the last value wins, as in the census
//     decoder and CPython's json.
//   - No whitespace between tokens.
//   - Strings as ES2019's well-formed JSON.stringify writes them: only '"',
//     '\\' and control characters are escaped (\b \f \n \r \t, the others
//     as \u00xx with lowercase hex); every other character, '/' and
//     U+2028 included, is written as itself in UTF-8. A lone surrogate,
//     which Python keeps in a str, is written \udxxx (lowercase hex).
//   - Numbers as ECMAScript's Number::toString writes the IEEE-754 double
//     the text rounds to: 1.0 is 1, 1e21 is 1e+21, 0.000001 is 0.000001,
//     1e-7 is 1e-7, -0 is 0. An integer too long for a double is rounded
//     to one, as float(int) rounds it; one beyond the double range, like a
//     float literal beyond it (1e400), is infinite.
//   - NaN, Infinity and -Infinity, which CPython accepts and RFC 8785 has
//     no form for, are written as those tokens; so is an infinite number.
//     The output is then not strict JSON, but equal values still give
//     equal bytes and CPython reads them back.
//
// raw may have whitespace around the value. Text CPython's json.loads
// would reject (after strict UTF-8 decoding) gives a *SyntaxError, with
// Decode's message and offset, and dst unchanged. Tool.Raw and Tool.Schema
// always canonicalise without error.
func AppendCanonical(dst, raw []byte) ([]byte, error) {
	c := canonPool.Get().(*canonicalizer)
	out, err := c.run(dst, raw)
	c.release()
	return out, err
}

var canonPool = sync.Pool{New: func() any { return new(canonicalizer) }}

// AppendCanonicalTool is AppendCanonical for a tool object (Tool.Raw),
// which also gives where in the result the canonical value of the input
// schema lies that the census decoder chooses: inputSchema, or
// input_schema when that is absent or null. out[a:b] is that value; a ==
// b when the tool has neither (or raw is no object). The canonicaliser
// notes it as it puts the top-level members in order; finding it in the
// output afterwards means skipping through the canonical text.
func AppendCanonicalTool(dst, raw []byte) (out []byte, a, b int, err error) {
	c := canonPool.Get().(*canonicalizer)
	out, a, b, err = c.tool(dst, raw)
	c.release()
	return out, a, b, err
}

// tool is AppendCanonicalTool with c.
func (c *canonicalizer) tool(dst, raw []byte) (out []byte, a, b int, err error) {
	c.findSchema, c.schemaA, c.schemaB, c.aliasA, c.aliasB = true, 0, 0, 0, 0
	out, err = c.run(dst, raw)
	c.findSchema = false
	if err != nil {
		// The ranges may have been noted before the error was found
		// (in text after the value), in output now taken back.
		return out, 0, 0, err
	}
	a, b = c.schemaA, c.schemaB
	if a == b || string(out[a:b]) == "null" {
		a, b = c.aliasA, c.aliasB
	}
	return out, a, b, nil
}

// canonicalizer holds the scratch memory of AppendCanonical.
type canonicalizer struct {
	lx   Lexer
	mems []canonMem            // members of the open objects, innermost last
	tmp  []byte                // an object's members while they are put in order
	str  []byte                // a decoded string being escaped
	keys []byte                // decoded keys of the open objects (the fast path: of all)
	ord  []canonMem            // one object's members in canonical order
	num  [32]byte              // a formatted number
	pbuf [keptDigits + 16]byte // a number literal brought to a short form
	// The tape of the fast path (canon_tape.go): the items of the open
	// containers, innermost last, and of the closed ones; the open
	// containers.
	stack, done []canonItem
	frames      []canonFrame
	// general turns the fast path off, for tests that hold the two
	// paths to each other.
	general bool
	// trusted says the text was validated by a Decoder (Tool.Raw): the
	// fast path then finds where its tokens end without checking their
	// bytes again (canon_trusted.go).
	trusted bool
	// With findSchema, the top-level object's inputSchema and
	// input_schema values are noted as ranges of the output.
	findSchema                       bool
	schemaA, schemaB, aliasA, aliasB int
}

// canonMem is one member of an object being canonicalised: its decoded key
// (a range of keys) and its canonical "key":value text (a range of the
// output).
type canonMem struct {
	ka, kb int
	va, vb int
}

func (c *canonicalizer) release() {
	c.lx.Reset(nil)
	c.tmp = retain(c.tmp, retainBytes)
	c.str = retain(c.str, retainBytes)
	c.keys = retain(c.keys, retainBytes)
	c.mems = retain(c.mems, retainItems)
	c.ord = retain(c.ord, retainItems)
	c.stack = retain(c.stack, tapeRetainItems)
	c.done = retain(c.done, tapeRetainItems)
	c.frames = retain(c.frames, tapeRetainItems)
	canonPool.Put(c)
}

func (c *canonicalizer) run(dst, raw []byte) ([]byte, error) {
	c.lx.data = raw
	c.mems, c.keys = c.mems[:0], c.keys[:0]
	base := len(dst)
	if !c.general {
		if out, ok := c.tape(dst); ok {
			return out, nil
		}
		c.keys = c.keys[:0]
	}
	out, err := c.top(dst)
	if err != nil {
		// Python decodes the text before json sees it: invalid UTF-8
		// anywhere outranks a syntax error before it.
		if uerr := checkUTF8(raw); uerr != nil {
			err = uerr
		}
		return dst[:base], err
	}
	return out, nil
}

func (c *canonicalizer) top(dst []byte) ([]byte, error) {
	data := c.lx.data
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		return dst, synErr(0, msgBOM)
	}
	dst, p, err := c.value(dst, skipWS(data, 0), 0)
	if err != nil {
		return dst, err
	}
	if p = skipWS(data, p); p != len(data) {
		return dst, synErr(p, msgExtra)
	}
	return dst, nil
}

// value appends the canonical form of the value at p, held by a container
// at the given depth (0 at the top), and returns the index past it.
func (c *canonicalizer) value(dst []byte, p, depth int) ([]byte, int, error) {
	data := c.lx.data
	if p >= len(data) {
		return dst, p, synErr(p, msgValue)
	}
	switch data[p] {
	case '{':
		return c.object(dst, p, depth+1)
	case '[':
		return c.array(dst, p, depth+1)
	case '"':
		end, esc, err := scanString(data, p)
		if err != nil {
			return dst, end, err
		}
		return c.appendString(dst, data[p+1:end-1], esc), end, nil
	}
	end, kind, err := scanScalar(data, p)
	if err != nil {
		return dst, end, err
	}
	return c.appendScalar(dst, data[p:end], kind), end, nil
}

func (c *canonicalizer) array(dst []byte, p, depth int) ([]byte, int, error) {
	if depth > MaxDepth {
		return dst, p, synErr(p, msgDepth)
	}
	dst = append(dst, '[')
	p, done := c.lx.ArrOpen(p)
	var err error
	for first := true; !done; first = false {
		if !first {
			dst = append(dst, ',')
		}
		if dst, p, err = c.value(dst, p, depth); err != nil {
			return dst, p, err
		}
		if p, done, err = c.lx.ArrNext(p); err != nil {
			return dst, p, err
		}
	}
	return append(dst, ']'), p, nil
}

// object writes the members in text order, each as "key":value, then,
// unless they already are in canonical order with no duplicate key, puts
// them in that order with the last of each duplicate, through tmp.
func (c *canonicalizer) object(dst []byte, p, depth int) ([]byte, int, error) {
	if depth > MaxDepth {
		return dst, p, synErr(p, msgDepth)
	}
	data := c.lx.data
	open := len(dst)
	dst = append(dst, '{')
	mstart, kstart := len(c.mems), len(c.keys)
	p, done := c.lx.ObjOpen(p)
	for !done {
		end, esc, v, err := c.lx.Key(p)
		if err != nil {
			return dst, v, err
		}
		if len(c.mems) > mstart {
			dst = append(dst, ',')
		}
		ma := len(dst)
		ka := len(c.keys)
		if esc {
			c.keys = appendUnescaped(c.keys, data[p+1:end-1])
			dst = c.appendDecoded(dst, c.keys[ka:])
		} else {
			c.keys = append(c.keys, data[p+1:end-1]...)
			dst = append(dst, data[p:end]...) // already canonical, as appendString explains
		}
		dst = append(dst, ':')
		if dst, p, err = c.value(dst, v, depth); err != nil {
			return dst, p, err
		}
		c.mems = append(c.mems, canonMem{ka, len(c.keys), ma, len(dst)})
		if p, done, err = c.lx.ObjNext(p); err != nil {
			return dst, p, err
		}
	}
	mems := c.mems[mstart:]
	var final []canonMem
	dst, final = c.order(dst, open+1, mems)
	if depth == 1 && c.findSchema {
		c.schemaRanges(dst, open+1, final)
	}
	c.mems, c.keys = c.mems[:mstart], c.keys[:kstart]
	return append(dst, '}'), p, nil
}

// schemaRanges notes where the values of inputSchema and input_schema are
// in dst, given the top-level object's members in output order from at
// (their ranges those they were written at, in text order). A member's
// value starts past its canonical key, a string, and the ':'.
func (c *canonicalizer) schemaRanges(dst []byte, at int, final []canonMem) {
	pos := at
	for _, m := range final {
		k := string(c.keys[m.ka:m.kb])
		if k == "inputSchema" || k == "input_schema" {
			vs := canonStringEnd(dst, pos) + 1
			if k == "inputSchema" {
				c.schemaA, c.schemaB = vs, pos+m.vb-m.va
			} else {
				c.aliasA, c.aliasB = vs, pos+m.vb-m.va
			}
		}
		pos += m.vb - m.va + 1 // and a comma
	}
}

// canonStringEnd is the index past the canonical string that starts at
// b[q]: canonical text escapes a quote only as \".
func canonStringEnd(b []byte, q int) int {
	for i := q + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// order rewrites dst[at:], the members joined by commas in text order, in
// canonical order with the last of each duplicate key, and returns the
// members in that order (their ranges those of the text order).
func (c *canonicalizer) order(dst []byte, at int, mems []canonMem) ([]byte, []canonMem) {
	keys := c.keys
	cmp := func(a, b canonMem) int { return compareUTF16(keys[a.ka:a.kb], keys[b.ka:b.kb]) }
	inOrder := true
	for i := 1; i < len(mems) && inOrder; i++ {
		inOrder = cmp(mems[i-1], mems[i]) < 0 // equal keys need the rewrite too
	}
	if inOrder {
		return dst, mems
	}
	ord := append(c.ord[:0], mems...)
	// Stable, so that of equal keys the last in the text stays last.
	slices.SortStableFunc(ord, cmp)
	w := 0
	for i := range ord {
		if i+1 < len(ord) && cmp(ord[i], ord[i+1]) == 0 {
			continue
		}
		ord[w] = ord[i]
		w++
	}
	ord = ord[:w]
	c.ord = ord
	c.tmp = append(c.tmp[:0], dst[at:]...)
	dst = dst[:at]
	for i, m := range ord {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, c.tmp[m.va-at:m.vb-at]...)
	}
	return dst, ord
}

// appendString writes the canonical form of a string's raw content.
// Without escapes the content is already canonical: the scanner accepted
// no control character, quote or backslash in it, and strict UTF-8 holds
// no surrogate.
func (c *canonicalizer) appendString(dst, raw []byte, esc bool) []byte {
	if !esc {
		dst = append(dst, '"')
		dst = append(dst, raw...)
		return append(dst, '"')
	}
	c.str = appendUnescaped(c.str[:0], raw)
	return c.appendDecoded(dst, c.str)
}

// appendDecoded writes a decoded (WTF-8) string with JCS's escapes.
func (c *canonicalizer) appendDecoded(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		switch {
		case b >= 0x20 && b != '"' && b != '\\' && b != 0xed:
			i++
			continue
		case b == 0xed:
			// U+D000 to U+D7FF are ordinary; ED A0 to ED BF start a
			// lone surrogate in WTF-8.
			if i+2 >= len(s) || s[i+1] < 0xa0 {
				i++
				continue
			}
		}
		dst = append(dst, s[start:i]...)
		switch b {
		case '"', '\\':
			dst = append(dst, '\\', b)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case 0xed:
			r := rune(b&0x0f)<<12 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f)
			dst = append(dst, '\\', 'u', hexLower[r>>12], hexLower[r>>8&0xf], hexLower[r>>4&0xf], hexLower[r&0xf])
			i += 3
			start = i
			continue
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexLower[b>>4], hexLower[b&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexLower = "0123456789abcdef"

// appendScalar writes a literal or number scanScalar accepted.
func (c *canonicalizer) appendScalar(dst, lit []byte, kind scalarKind) []byte {
	switch {
	case kind == scalarLiteral:
		return append(dst, lit...)
	case lit[0] == 'N' || lit[0] == 'I' || len(lit) > 1 && lit[1] == 'I':
		return append(dst, lit...) // NaN, Infinity, -Infinity
	case kind == scalarInt:
		// An integer of at most 15 digits is a double exactly, and
		// Number::toString writes it as its digits; only -0 differs.
		digits := len(lit)
		if lit[0] == '-' {
			digits--
		}
		if digits <= 15 {
			if len(lit) == 2 && lit[0] == '-' && lit[1] == '0' {
				return append(dst, '0') // -0: JSON allows no other leading zero
			}
			return append(dst, lit...)
		}
	}
	return appendNumber(dst, parseDouble(lit, &c.pbuf), &c.num)
}

// parseDouble is the double a number literal scanScalar accepted rounds
// to, as Python's float() gives it (infinite beyond the range, where
// float(int) would raise). strconv.ParseFloat misreads mantissas of more
// than 800 digits, so the literal is first brought to at most
// keptDigits significant digits, a nonzero tail standing as one sticky
// digit: the rounding of a double is decided within 768 digits.
func parseDouble(lit []byte, buf *[keptDigits + 16]byte) float64 {
	neg := lit[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	b := buf[:0]
	b = append(b, '0', '.')
	point, lead, sticky := 0, true, false // point: digits before the point, less leading zeros
	intPart := true
	for ; i < len(lit); i++ {
		c := lit[i]
		if c == '.' {
			intPart = false
			continue
		}
		if c == 'e' || c == 'E' {
			break
		}
		if lead && c == '0' {
			if !intPart {
				point--
			}
			continue
		}
		lead = false
		if intPart {
			point++
		}
		if len(b)-2 < keptDigits {
			b = append(b, c)
		} else if c != '0' {
			sticky = true
		}
	}
	if lead {
		return 0 // no nonzero digit; Number::toString writes -0 as 0 anyway
	}
	if sticky {
		b = append(b, '1')
	}
	exp := 0
	if i < len(lit) {
		i++
		eneg := lit[i] == '-'
		if lit[i] == '-' || lit[i] == '+' {
			i++
		}
		for ; i < len(lit); i++ {
			if exp < 1<<20 {
				exp = exp*10 + int(lit[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	e := point + exp // the value is 0.digits × 10^e
	var f float64
	switch {
	case e > 400:
		f = math.Inf(1)
	case e < -400:
		f = 0
	default:
		b = append(b, 'e')
		b = strconv.AppendInt(b, int64(e), 10)
		f, _ = strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	}
	if neg {
		f = -f
	}
	return f
}

// keptDigits is the most significant digits parseDouble hands to
// strconv.ParseFloat, itself exact up to 800.
const keptDigits = 780

// appendNumber writes f as ECMAScript's Number::toString does: the
// shortest digits that read back as f, placed by the exponent.
func appendNumber(dst []byte, f float64, scratch *[32]byte) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		return append(dst, '0') // -0 too
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// 'e' with the shortest precision: d[.ddd]e±XX.
	b := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64)
	e := len(b) - 1
	for b[e] != 'e' {
		e--
	}
	exp, _ := strconv.Atoi(string(b[e+1:]))
	var digits [24]byte
	k := copy(digits[:], b[:1])
	if e > 1 {
		k += copy(digits[k:], b[2:e])
	}
	n := exp + 1 // the decimal point sits after n digits
	ds := digits[:k]
	switch {
	case k <= n && n <= 21:
		dst = append(dst, ds...)
		for i := k; i < n; i++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, ds[:n]...)
		dst = append(dst, '.')
		dst = append(dst, ds[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for i := n; i < 0; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, ds...)
	default:
		dst = append(dst, ds[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, ds[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// compareUTF16 orders two decoded (WTF-8) keys as sequences of UTF-16 code
// units, as RFC 8785 sorts members. UTF-8 byte order is code point order,
// which differs from UTF-16 order only where a supplementary character
// (two surrogate units) meets one of U+D800 to U+FFFF; so the bytes decide
// up to the first difference, and from the code point holding it the
// units do.
func compareUTF16(a, b []byte) int {
	n := min(len(a), len(b))
	j := 0
	for j < n && a[j] == b[j] {
		j++
	}
	if j == n {
		return len(a) - len(b)
	}
	i := j
	for i > 0 && a[i]&0xc0 == 0x80 {
		i-- // back to the start of the code point that differs
	}
	if a[i] < 0xed && b[i] < 0xed {
		return int(a[j]) - int(b[j]) // both below U+D000: byte order is unit order
	}
	ua, ub := utf16Units{s: a[i:]}, utf16Units{s: b[i:]}
	for {
		x, okx := ua.next()
		y, oky := ub.next()
		switch {
		case !okx && !oky:
			return 0
		case !okx:
			return -1
		case !oky:
			return 1
		case x != y:
			return int(x) - int(y)
		}
	}
}

// utf16Units reads a WTF-8 string as UTF-16 code units.
type utf16Units struct {
	s   []byte
	low uint16 // a pending low surrogate, or 0
}

func (u *utf16Units) next() (uint16, bool) {
	if u.low != 0 {
		x := u.low
		u.low = 0
		return x, true
	}
	if len(u.s) == 0 {
		return 0, false
	}
	r, size := decodeWTF8(u.s)
	u.s = u.s[size:]
	if r < 0x10000 {
		return uint16(r), true
	}
	r -= 0x10000
	u.low = uint16(0xdc00 + r&0x3ff)
	return uint16(0xd800 + r>>10), true
}

// decodeWTF8 decodes one code point of a decoded string, a lone surrogate's
// 3-byte form included.
func decodeWTF8(s []byte) (rune, int) {
	if s[0] == 0xed && len(s) >= 3 && s[1] >= 0xa0 {
		return rune(s[0]&0x0f)<<12 | rune(s[1]&0x3f)<<6 | rune(s[2]&0x3f), 3
	}
	return utf8.DecodeRune(s)
}
