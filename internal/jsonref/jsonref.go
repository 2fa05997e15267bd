// Package jsonref is the test oracle for the census package's JSON
// reading: a slow, literal transcription of CPython's json scanner
// (Modules/_json.c: scan_once, _parse_object, _parse_array, scanstring,
// _match_number) that decodes a line into code points, as Python's str,
// and builds ordered generic values. It shares no code with census: the
// tests and fuzz targets of census and sensitivity hold the fast readers to
// it. It allocates freely and is for tests only.
package jsonref

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth and MaxIntDigits are census's limits (CPython's recursion limit
// as census models it, and sys.int_max_str_digits), restated here so that
// the oracle stands alone; census's tests check that they agree.
const (
	MaxDepth     = 990
	MaxIntDigits = 4300
)

// The messages census gives, restated for the same reason.
const (
	msgBOM          = "Unexpected UTF-8 BOM (decode using utf-8-sig)"
	msgUTF8         = "invalid UTF-8"
	msgValue        = "Expecting value"
	msgExtra        = "Extra data"
	msgKey          = "Expecting property name enclosed in double quotes"
	msgColon        = "Expecting ':' delimiter"
	msgComma        = "Expecting ',' delimiter"
	msgUnterminated = "Unterminated string starting"
	msgControl      = "Invalid control character"
	msgEscape       = "Invalid \\escape"
	msgUEscape      = "Invalid \\uXXXX escape"
	msgDepth        = "maximum nesting depth exceeded"
	msgIntDigits    = "integer literal exceeds the 4300-digit limit"
)

// SyntaxError is a line json.loads (after strict UTF-8 decoding) rejects.
type SyntaxError struct {
	Offset int    // byte offset in the line
	Msg    string // census's wording
}

// Error returns the message and the byte offset.
func (e *SyntaxError) Error() string {
	return e.Msg + " at byte " + strconv.Itoa(e.Offset)
}

// Kind is the Python type a JSON value decodes to.
type Kind uint8

// The kinds of Value.
const (
	Null Kind = iota
	Bool
	Int
	Float
	String
	List
	Dict
)

// Value is a JSON value as CPython's json.loads builds it.
type Value struct {
	Kind Kind
	// Str is a string in WTF-8 (a lone surrogate in its 3-byte form), or
	// the literal text of a number or constant.
	Str  string
	List []*Value
	// Keys are a dict's keys in first-insertion order, Dict the last value
	// given to each (Python's dict semantics for duplicate keys).
	Keys []string
	Dict map[string]*Value
	// Raw is a dict's text in the line, from '{' to '}'.
	Raw []byte
}

func (o *Value) set(k string, v *Value) {
	if _, ok := o.Dict[k]; !ok {
		o.Keys = append(o.Keys, k)
	}
	o.Dict[k] = v
}

// Get is dict.get: nil for a missing key (JSON null is a non-nil Value of
// kind Null) or when o is not a dict.
func (o *Value) Get(k string) *Value {
	if o == nil || o.Kind != Dict {
		return nil
	}
	return o.Dict[k]
}

// refParser holds the line as code points, like a Python str, with the byte
// offset of each so that errors can be reported in bytes.
type refParser struct {
	s    []rune
	off  []int // byte offset of s[i]; off[len(s)] is the line length
	line []byte
}

func (r *refParser) err(idx int, msg string) error {
	return &SyntaxError{Offset: r.off[idx], Msg: msg}
}

// Parse is json.loads on the line decoded as strict UTF-8: the value,
// or the error CPython raises, at the byte offset where it finds it.
func Parse(line []byte) (*Value, error) {
	r := &refParser{s: make([]rune, 0, len(line)), off: make([]int, 0, len(line)+1), line: line}
	for i := 0; i < len(line); {
		c, n := utf8.DecodeRune(line[i:])
		if c == utf8.RuneError && n == 1 {
			return nil, &SyntaxError{Offset: i, Msg: msgUTF8}
		}
		r.s = append(r.s, c)
		r.off = append(r.off, i)
		i += n
	}
	r.off = append(r.off, len(line))
	// json.loads refuses a str that starts with a BOM.
	if len(r.s) > 0 && r.s[0] == 0xfeff {
		return nil, r.err(0, msgBOM)
	}
	// JSONDecoder.decode: skip whitespace, raw_decode, skip whitespace, and
	// anything left over is "Extra data".
	v, end, err := r.scanOnce(r.ws(0), 0)
	if err != nil {
		return nil, err
	}
	if end = r.ws(end); end != len(r.s) {
		return nil, r.err(end, msgExtra)
	}
	return v, nil
}

// ws skips json's whitespace: space, tab, LF, CR only.
func (r *refParser) ws(i int) int {
	for i < len(r.s) && (r.s[i] == ' ' || r.s[i] == '\t' || r.s[i] == '\n' || r.s[i] == '\r') {
		i++
	}
	return i
}

// has reports whether the code points at i spell lit.
func (r *refParser) has(i int, lit string) bool {
	if i+len(lit) > len(r.s) {
		return false
	}
	for j := 0; j < len(lit); j++ {
		if r.s[i+j] != rune(lit[j]) {
			return false
		}
	}
	return true
}

// scanOnce parses the value at idx. depth counts the containers already
// open; CPython's recursion guard is modelled by MaxDepth.
func (r *refParser) scanOnce(idx, depth int) (*Value, int, error) {
	if idx >= len(r.s) {
		return nil, idx, r.err(idx, msgValue)
	}
	switch r.s[idx] {
	case '"':
		s, end, err := r.scanString(idx + 1)
		return &Value{Kind: String, Str: s}, end, err
	case '{':
		if depth+1 > MaxDepth {
			return nil, idx, r.err(idx, msgDepth)
		}
		return r.parseObject(idx+1, depth+1)
	case '[':
		if depth+1 > MaxDepth {
			return nil, idx, r.err(idx, msgDepth)
		}
		return r.parseArray(idx+1, depth+1)
	case 'n':
		if r.has(idx, "null") {
			return &Value{Kind: Null}, idx + 4, nil
		}
	case 't':
		if r.has(idx, "true") {
			return &Value{Kind: Bool, Str: "true"}, idx + 4, nil
		}
	case 'f':
		if r.has(idx, "false") {
			return &Value{Kind: Bool, Str: "false"}, idx + 5, nil
		}
	case 'N':
		if r.has(idx, "NaN") {
			return &Value{Kind: Float, Str: "NaN"}, idx + 3, nil
		}
	case 'I':
		if r.has(idx, "Infinity") {
			return &Value{Kind: Float, Str: "Infinity"}, idx + 8, nil
		}
	case '-':
		if r.has(idx, "-Infinity") {
			return &Value{Kind: Float, Str: "-Infinity"}, idx + 9, nil
		}
	}
	return r.matchNumber(idx)
}

func isDigitRune(c rune) bool { return c >= '0' && c <= '9' }

// matchNumber is _match_number_unicode.
func (r *refParser) matchNumber(start int) (*Value, int, error) {
	s := r.s
	endIdx := len(s) - 1
	idx := start
	if s[idx] == '-' {
		idx++
		if idx > endIdx {
			return nil, start, r.err(start, msgValue)
		}
	}
	intStart := idx
	if s[idx] >= '1' && s[idx] <= '9' {
		idx++
		for idx <= endIdx && isDigitRune(s[idx]) {
			idx++
		}
	} else if s[idx] == '0' {
		idx++
	} else {
		return nil, start, r.err(start, msgValue)
	}
	intDigits := idx - intStart
	isFloat := false
	if idx < endIdx && s[idx] == '.' && isDigitRune(s[idx+1]) {
		isFloat = true
		idx += 2
		for idx <= endIdx && isDigitRune(s[idx]) {
			idx++
		}
	}
	if idx < endIdx && (s[idx] == 'e' || s[idx] == 'E') {
		eStart := idx
		idx++
		if idx < endIdx && (s[idx] == '-' || s[idx] == '+') {
			idx++
		}
		for idx <= endIdx && isDigitRune(s[idx]) {
			idx++
		}
		if isDigitRune(s[idx-1]) {
			isFloat = true
		} else {
			idx = eStart
		}
	}
	text := string(s[start:idx])
	if isFloat {
		return &Value{Kind: Float, Str: text}, idx, nil
	}
	// PyLong_FromString and sys.int_max_str_digits.
	if intDigits > MaxIntDigits {
		return nil, start, r.err(start, msgIntDigits)
	}
	return &Value{Kind: Int, Str: text}, idx, nil
}

// scanString is scanstring_unicode with strict=True; end is the index just
// after the opening quote. It returns the string in WTF-8.
func (r *refParser) scanString(end int) (string, int, error) {
	s := r.s
	n := len(s)
	begin := end - 1
	var chunks []rune
	for {
		next := end
		var c rune
		for ; next < n; next++ {
			c = s[next]
			if c == '"' || c == '\\' {
				break
			}
			if c <= 0x1f {
				return "", next, r.err(next, msgControl)
			}
		}
		if next >= n {
			return "", begin, r.err(begin, msgUnterminated)
		}
		chunks = append(chunks, s[end:next]...)
		if c == '"' {
			return wtf8(chunks), next + 1, nil
		}
		next++ // the backslash
		if next == n {
			return "", begin, r.err(begin, msgUnterminated)
		}
		c = s[next]
		if c != 'u' {
			end = next + 1
			switch c {
			case '"', '\\', '/':
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			default:
				return "", end - 2, r.err(end-2, msgEscape)
			}
		} else {
			next++
			end = next + 4
			if end >= n {
				return "", next - 1, r.err(next-1, msgUEscape)
			}
			v, ok := hexRunes(s[next:end])
			if !ok {
				return "", end - 5, r.err(end-5, msgUEscape)
			}
			c = v
			next = end
			// A high surrogate followed by another \u escape may pair.
			if c >= 0xd800 && c <= 0xdbff && end+6 < n && s[next] == '\\' && s[next+1] == 'u' {
				end += 6
				c2, ok := hexRunes(s[next+2 : end])
				if !ok {
					return "", end - 5, r.err(end-5, msgUEscape)
				}
				if c2 >= 0xdc00 && c2 <= 0xdfff {
					c = 0x10000 + (c-0xd800)<<10 + (c2 - 0xdc00)
				} else {
					end -= 6
				}
			}
		}
		chunks = append(chunks, c)
	}
}

func hexRunes(h []rune) (rune, bool) {
	var v rune
	for _, d := range h {
		v <<= 4
		switch {
		case d >= '0' && d <= '9':
			v |= d - '0'
		case d >= 'a' && d <= 'f':
			v |= d - 'a' + 10
		case d >= 'A' && d <= 'F':
			v |= d - 'A' + 10
		default:
			return 0, false
		}
	}
	return v, true
}

// wtf8 encodes code points as Python's "utf-8" codec with "surrogatepass"
// would: lone surrogates as 3-byte sequences.
func wtf8(cs []rune) string {
	var b strings.Builder
	for _, c := range cs {
		if c >= 0xd800 && c <= 0xdfff {
			b.WriteByte(byte(0xe0 | c>>12))
			b.WriteByte(byte(0x80 | (c>>6)&0x3f))
			b.WriteByte(byte(0x80 | c&0x3f))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// parseObject is _parse_object_unicode; idx is just after the '{'.
func (r *refParser) parseObject(idx, depth int) (*Value, int, error) {
	start := idx
	s := r.s
	n := len(s)
	obj := &Value{Kind: Dict, Dict: map[string]*Value{}}
	idx = r.ws(idx)
	if idx >= n || s[idx] != '}' {
		for {
			if idx >= n || s[idx] != '"' {
				return nil, idx, r.err(idx, msgKey)
			}
			key, next, err := r.scanString(idx + 1)
			if err != nil {
				return nil, next, err
			}
			idx = r.ws(next)
			if idx >= n || s[idx] != ':' {
				return nil, idx, r.err(idx, msgColon)
			}
			idx = r.ws(idx + 1)
			val, next, err := r.scanOnce(idx, depth)
			if err != nil {
				return nil, next, err
			}
			obj.set(key, val)
			idx = r.ws(next)
			if idx < n && s[idx] == '}' {
				break
			}
			if idx >= n || s[idx] != ',' {
				return nil, idx, r.err(idx, msgComma)
			}
			idx = r.ws(idx + 1)
		}
	}
	obj.Raw = r.line[r.off[start-1]:r.off[idx+1]]
	return obj, idx + 1, nil
}

// parseArray is _parse_array_unicode; idx is just after the '['.
func (r *refParser) parseArray(idx, depth int) (*Value, int, error) {
	s := r.s
	n := len(s)
	arr := &Value{Kind: List}
	idx = r.ws(idx)
	if idx >= n || s[idx] != ']' {
		for {
			val, next, err := r.scanOnce(idx, depth)
			if err != nil {
				return nil, next, err
			}
			arr.List = append(arr.List, val)
			idx = r.ws(next)
			if idx < n && s[idx] == ']' {
				break
			}
			if idx >= n || s[idx] != ',' {
				return nil, idx, r.err(idx, msgComma)
			}
			idx = r.ws(idx + 1)
		}
	}
	return arr, idx + 1, nil
}
