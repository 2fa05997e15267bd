package probe

import "unicode/utf8"

// ReplaceInvalidUTF8 returns b with each maximal subpart of an ill-formed
// UTF-8 sequence replaced by one U+FFFD: the Unicode Standard's
// recommended practice (§3.9, "U+FFFD Substitution of Maximal Subparts"),
// which Python's bytes.decode("utf-8", errors="replace") and WHATWG's
// decoder follow. So "A\xff\xfeB\xe2\x82C" becomes "A\uFFFD\uFFFDB\uFFFDC":
// two bytes that can begin nothing are two replacements, and a truncated
// three-byte sequence is one. (Go's bytes.ToValidUTF8 would give one
// replacement for each run, and its decoder one for each byte.) b is
// returned as is when it is valid.
func ReplaceInvalidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		if r, n := utf8.DecodeRune(b[i:]); r != utf8.RuneError || n > 1 {
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		out = append(out, "\uFFFD"...)
		i += maximalSubpart(b[i:])
	}
	return out
}

// maximalSubpart is the length of the longest prefix of b that begins a
// well-formed sequence (Table 3-7 of the Unicode Standard), at least 1.
// b does not begin with a well-formed sequence.
func maximalSubpart(b []byte) int {
	lo, hi := byte(0x80), byte(0xBF)
	var need int
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}
