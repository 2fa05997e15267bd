package census

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// Lexer is census's one reader of JSON text: whitespace, strings (with
// CPython's escapes and surrogates, and strict UTF-8), numbers, literals,
// and the punctuation of objects and arrays, each step validated as
// CPython's C scanner (Modules/_json.c) validates it and failing where and
// how it fails. The Decoder, its streaming pass, AppendCanonical and the
// sensitivity package's deep walk all read through it, so that they agree
// on every byte.
//
// Positions are byte offsets in the text; a method takes the position of a
// token and returns the position past it. The zero value is ready after
// Reset.
type Lexer struct {
	data  []byte
	stack []byte // open containers while skipping
	// validated says the text has been read through once already (Stream's
	// second pass): Skip then only finds the value's end, as
	// SkipValidated does.
	validated bool
}

// Reset makes the Lexer read data.
func (l *Lexer) Reset(data []byte) { l.data, l.validated = data, false }

// Data is the text being read.
func (l *Lexer) Data() []byte { return l.data }

// At is the byte at p, or 0 past the end (which no valid token starts with).
func (l *Lexer) At(p int) byte {
	if p < len(l.data) {
		return l.data[p]
	}
	return 0
}

// WS returns the position of the first byte at or after p that is not
// json's whitespace (space, tab, CR, LF).
func (l *Lexer) WS(p int) int { return skipWS(l.data, p) }

// String validates the string whose opening quote is at q and returns the
// position past its closing quote and whether it holds an escape; its
// content is Data()[q+1 : end-1].
func (l *Lexer) String(q int) (end int, esc bool, err error) { return scanString(l.data, q) }

// synErr builds the error for a line Python's json would reject. It runs only
// on the error path, so its allocation does not matter.
func synErr(off int, msg string) error {
	return &SyntaxError{Offset: off, Msg: msg}
}

// checkUTF8 reports where a line stops being strict UTF-8, where Python's
// decoder would refuse it before json ever runs. utf8.Valid rejects exactly
// what Python's strict codec rejects: overlong forms, encoded surrogates and
// code points past U+10FFFF. The fast decoder calls it only once a line has
// failed, to report the error Python would report first.
func checkUTF8(line []byte) error {
	if utf8.Valid(line) {
		return nil
	}
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n == 1 {
			return synErr(i, msgUTF8)
		}
		i += n
	}
	return synErr(len(line), msgUTF8) // not reached: Valid said there is an error
}

// jsonSpace marks the four characters json accepts between tokens; str
// whitespace such as \v or U+00A0 is an error there.
var jsonSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// skipWS returns the index of the first non-whitespace byte at or after p.
func skipWS(data []byte, p int) int {
	for p < len(data) {
		c := data[p]
		if c > ' ' || !jsonSpace[c] {
			return p
		}
		p++
	}
	return p
}

// strSpecial marks the bytes that end a run of plain ASCII string content:
// the closing quote, a backslash, a control character strict mode rejects,
// or the first byte of a multi-byte sequence, which must be valid UTF-8.
var strSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

// specialMask flags, in the high bit of each byte, the bytes of x that
// strSpecial marks. Only the lowest flagged byte is exact (a borrow can flag
// bytes above a true hit), which is all the caller uses.
func specialMask(x uint64) uint64 {
	const lo = 0x0101010101010101
	const hi = 0x8080808080808080
	q := x ^ (lo * '"')
	b := x ^ (lo * '\\')
	return (((q - lo) &^ q) | ((b - lo) &^ b) | ((x - lo*0x20) &^ x) | x) & hi
}

// scanString validates the string whose opening quote is at q and returns
// the index just past its closing quote and whether it holds an escape. It
// checks that non-ASCII text is valid UTF-8 (strings are the only place a
// valid line can hold any), and checks escapes without decoding them: a
// surrogate pair needs no check of its own, since each half is a valid
// \uXXXX escape by itself and CPython reports the same error at the same
// place whether it tried to pair them or not.
func scanString(data []byte, q int) (int, bool, error) {
	n := len(data)
	p := q + 1
	esc := false
	for {
		// Eight bytes at a time until one is special; long descriptions are
		// most of a census line.
		if p+8 <= n {
			m := specialMask(binary.LittleEndian.Uint64(data[p:]))
			if m == 0 {
				p += 8
				continue
			}
			p += bits.TrailingZeros64(m) >> 3
		} else {
			for p < n && !strSpecial[data[p]] {
				p++
			}
			if p >= n {
				return p, esc, synErr(q, msgUnterminated)
			}
		}
		switch data[p] {
		case '"':
			return p + 1, esc, nil
		case '\\':
			esc = true
			if p+1 >= n {
				return p, esc, synErr(q, msgUnterminated)
			}
			switch data[p+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p += 2
			case 'u':
				if p+6 >= n {
					return p, esc, synErr(p+1, msgUEscape)
				}
				if hexVal[data[p+2]]|hexVal[data[p+3]]|hexVal[data[p+4]]|hexVal[data[p+5]] > 0xf {
					return p, esc, synErr(p+1, msgUEscape)
				}
				p += 6
			default:
				return p, esc, synErr(p, msgEscape)
			}
		default:
			if data[p] < 0x20 {
				return p, esc, synErr(p, msgControl)
			}
			for p < n && data[p] >= utf8.RuneSelf {
				r, size := utf8.DecodeRune(data[p:])
				if r == utf8.RuneError && size == 1 {
					return p, esc, synErr(p, msgUTF8)
				}
				p += size
			}
		}
	}
}

// hexVal maps a hex digit to its value and every other byte to 0xff, so that
// OR-ing four lookups flags any non-digit.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()

// unicodeEscape decodes the \uXXXX escape at raw[i:], validated by
// scanString, and a low surrogate's escape right after a high one's with
// it, as CPython pairs them; it returns the rune and the index past the
// escapes.
func unicodeEscape(raw []byte, i int) (rune, int) {
	r := hex4(raw[i+2:])
	i += 6
	if r >= 0xd800 && r < 0xdc00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
		if r2 := hex4(raw[i+2:]); r2 >= 0xdc00 && r2 < 0xe000 {
			return 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00), i + 6
		}
	}
	return r, i
}

// hex4 decodes four hex digits already validated by scanString.
func hex4(b []byte) rune {
	return rune(hexVal[b[0]])<<12 | rune(hexVal[b[1]])<<8 | rune(hexVal[b[2]])<<4 | rune(hexVal[b[3]])
}

// appendUnescaped appends the decoded form of raw, the content between the
// quotes of a string scanString accepted. Surrogate pairs combine as CPython
// combines them (a high surrogate escape immediately followed by a low one);
// any other surrogate stays alone and is written in its 3-byte WTF-8 form,
// because Python keeps it in the str and a Go rune encoder would replace it.
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			var r rune
			r, i = unicodeEscape(raw, i)
			dst = appendWTF8(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

// appendWTF8 appends r in UTF-8, writing a surrogate code point in the
// generalized 3-byte form that utf8.AppendRune refuses to produce.
func appendWTF8(dst []byte, r rune) []byte {
	if r >= 0xd800 && r < 0xe000 {
		return append(dst, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
	}
	return utf8.AppendRune(dst, r)
}

// scalarKind is what scanScalar found; the server id rule needs to tell an
// integer from every other number.
type scalarKind uint8

const (
	scalarInt scalarKind = iota
	scalarFloat
	scalarLiteral // true, false, null
)

// scanScalar scans the literal or number starting at p, in the order of
// CPython's scan_once: a named constant when its whole spelling is there,
// else a number, else "Expecting value" at p.
func scanScalar(data []byte, p int) (int, scalarKind, error) {
	n := len(data)
	if p >= n {
		return p, 0, synErr(p, msgValue)
	}
	switch data[p] {
	case 'n':
		if p+4 <= n && string(data[p:p+4]) == "null" {
			return p + 4, scalarLiteral, nil
		}
	case 't':
		if p+4 <= n && string(data[p:p+4]) == "true" {
			return p + 4, scalarLiteral, nil
		}
	case 'f':
		if p+5 <= n && string(data[p:p+5]) == "false" {
			return p + 5, scalarLiteral, nil
		}
	case 'N':
		if p+3 <= n && string(data[p:p+3]) == "NaN" {
			return p + 3, scalarFloat, nil
		}
	case 'I':
		if p+8 <= n && string(data[p:p+8]) == "Infinity" {
			return p + 8, scalarFloat, nil
		}
	case '-':
		if p+9 <= n && string(data[p:p+9]) == "-Infinity" {
			return p + 9, scalarFloat, nil
		}
	}
	return scanNumber(data, p)
}

// isDigit marks ASCII decimal digits.
var isDigit = [256]bool{'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true}

// scanNumber matches the longest number prefix at p the way CPython's
// _match_number_unicode does: a fraction needs a digit after the dot and an
// exponent needs a digit, else the scanner backs off to before them and the
// caller trips over the leftover byte. Integers longer than MaxIntDigits fail
// here, where CPython's int conversion would raise.
func scanNumber(data []byte, p int) (int, scalarKind, error) {
	n := len(data)
	start := p
	if data[p] == '-' {
		p++
		if p >= n {
			return start, 0, synErr(start, msgValue)
		}
	}
	intStart := p
	switch c := data[p]; {
	case c >= '1' && c <= '9':
		p++
		for p < n && isDigit[data[p]] {
			p++
		}
	case c == '0':
		p++
	default:
		return start, 0, synErr(start, msgValue)
	}
	intEnd := p
	kind := scalarInt
	if p+1 < n && data[p] == '.' && isDigit[data[p+1]] {
		kind = scalarFloat
		p += 2
		for p < n && isDigit[data[p]] {
			p++
		}
	}
	if p+1 < n && (data[p] == 'e' || data[p] == 'E') {
		e := p
		p++
		if p+1 < n && (data[p] == '+' || data[p] == '-') {
			p++
		}
		ds := p
		for p < n && isDigit[data[p]] {
			p++
		}
		if p > ds {
			kind = scalarFloat
		} else {
			p = e
		}
	}
	if kind == scalarInt && intEnd-intStart > MaxIntDigits {
		return start, 0, synErr(start, msgIntDigits)
	}
	return p, kind, nil
}

// ObjOpen steps into the object whose '{' is at p. done is true for an
// empty object, with p past its '}'.
func (l *Lexer) ObjOpen(p int) (int, bool) {
	data := l.data
	p = skipWS(data, p+1)
	if p < len(data) && data[p] == '}' {
		return p + 1, true
	}
	return p, false
}

// Key validates the member name at p and the colon after it: the name is
// the string from p to end, and the value starts at v. On an error v is
// where it was found.
func (l *Lexer) Key(p int) (end int, esc bool, v int, err error) {
	data := l.data
	if p >= len(data) || data[p] != '"' {
		return p, false, p, synErr(p, msgKey)
	}
	end, esc, err = scanString(data, p)
	if err != nil {
		return end, esc, end, err
	}
	v = skipWS(data, end)
	if v >= len(data) || data[v] != ':' {
		return end, esc, v, synErr(v, msgColon)
	}
	return end, esc, skipWS(data, v+1), nil
}

// ObjNext steps past the ',' or '}' after a member's value; done is true
// past the '}'.
func (l *Lexer) ObjNext(p int) (int, bool, error) {
	return l.next(p, '}')
}

// ArrOpen steps into the array whose '[' is at p, as ObjOpen.
func (l *Lexer) ArrOpen(p int) (int, bool) {
	data := l.data
	p = skipWS(data, p+1)
	if p < len(data) && data[p] == ']' {
		return p + 1, true
	}
	return p, false
}

// ArrNext steps past the ',' or ']' after an element, as ObjNext.
func (l *Lexer) ArrNext(p int) (int, bool, error) {
	return l.next(p, ']')
}

func (l *Lexer) next(p int, closer byte) (int, bool, error) {
	data := l.data
	p = skipWS(data, p)
	if p < len(data) {
		switch data[p] {
		case ',':
			return skipWS(data, p+1), false, nil
		case closer:
			return p + 1, true, nil
		}
	}
	return p, false, synErr(p, msgComma)
}

// Skip validates the value at p without building anything. depth is the
// nesting of the container holding it (0 at the top), so that nesting past
// MaxDepth fails as CPython's recursion limit makes it fail.
func (l *Lexer) Skip(p, depth int) (int, error) {
	if l.validated {
		return l.SkipValidated(p), nil
	}
	data := l.data
	if p < len(data) {
		switch data[p] {
		case '"':
			end, _, err := scanString(data, p)
			return end, err
		case '{', '[':
			return l.skipContainer(p, depth)
		}
	}
	end, _, err := scanScalar(data, p)
	return end, err
}

// skipContainer validates the array or object at p with an explicit stack
// of open brackets instead of recursion, so that any nesting ends in a clean
// error at MaxDepth rather than in a stack overflow.
func (l *Lexer) skipContainer(p, depth int) (int, error) {
	data := l.data
	n := len(data)
	// The depth check bounds the stack, so it never grows past this.
	if cap(l.stack) < MaxDepth {
		l.stack = make([]byte, 0, MaxDepth)
	}
	stack := l.stack[:0]
	var err error
	for {
		// p is at the start of a value.
		if p >= n {
			return p, synErr(p, msgValue)
		}
		c := data[p]
		if c == '{' || c == '[' {
			if depth+len(stack)+1 > MaxDepth {
				return p, synErr(p, msgDepth)
			}
			stack = append(stack, c+2) // the matching '}' or ']'
			p = skipWS(data, p+1)
			if p < n && data[p] == c+2 {
				stack = stack[:len(stack)-1]
				p++
			} else {
				if c == '{' {
					if _, _, p, err = l.Key(p); err != nil {
						return p, err
					}
				}
				continue
			}
		} else if c == '"' {
			if p, _, err = scanString(data, p); err != nil {
				return p, err
			}
		} else if p, _, err = scanScalar(data, p); err != nil {
			return p, err
		}
		// A value just ended: close containers until one continues.
		for {
			if len(stack) == 0 {
				return p, nil
			}
			p = skipWS(data, p)
			if p >= n {
				return p, synErr(p, msgComma)
			}
			closer := stack[len(stack)-1]
			if data[p] == ',' {
				p = skipWS(data, p+1)
				if closer == '}' {
					if _, _, p, err = l.Key(p); err != nil {
						return p, err
					}
				}
				break
			}
			if data[p] != closer {
				return p, synErr(p, msgComma)
			}
			stack = stack[:len(stack)-1]
			p++
		}
	}
}

// The three methods below read text the Lexer has already validated
// (Tool.Schema and Tool.Raw are such text), for readers that walk it again.
// They find where a token ends without checking it: bytes.IndexByte finds
// a string's closing quote many bytes at a time, where String must look at
// every byte for control characters and UTF-8. On the real schemas this
// made the deep walk of the sensitivity variants (BenchmarkDeep) about 1.4
// times as fast as with String and Skip, so the split stays. On text that
// is not valid they return a position no further than the end, and never
// fail.

// StringEnd is String for validated text.
func (l *Lexer) StringEnd(q int) (end int, esc bool) {
	data := l.data
	p := q + 1
	for {
		i := bytes.IndexByte(data[p:], '"')
		if i < 0 {
			return len(data), esc
		}
		j := p + i
		k := j - 1
		for k > q && data[k] == '\\' {
			k--
		}
		if (j-1-k)%2 == 0 {
			// An even run of backslashes (maybe none) before the quote:
			// it closes the string.
			return j + 1, esc || bytes.IndexByte(data[q+1:j], '\\') >= 0
		}
		esc = true
		p = j + 1
	}
}

// KeyValidated is Key for validated text.
func (l *Lexer) KeyValidated(p int) (end int, esc bool, v int) {
	end, esc = l.StringEnd(p)
	v = skipWS(l.data, end)
	if v < len(l.data) {
		v++ // the ':'
	}
	return end, esc, skipWS(l.data, v)
}

// SkipValidated is Skip for validated text: it counts brackets outside
// strings.
func (l *Lexer) SkipValidated(p int) int {
	data := l.data
	if p >= len(data) {
		return len(data)
	}
	switch data[p] {
	case '"':
		end, _ := l.StringEnd(p)
		return end
	case '{', '[':
		depth := 0
		for p < len(data) {
			switch data[p] {
			case '"':
				p, _ = l.StringEnd(p)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return p + 1
				}
			}
			p++
		}
		return p
	}
	for p < len(data) {
		switch data[p] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return p
		}
		p++
	}
	return p
}
