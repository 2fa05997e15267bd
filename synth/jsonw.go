package synth

import (
	"strconv"
	"unicode/utf8"
)

// String escaping styles. The decoded value is the same whatever the style:
// they exist so that the files exercise the escapes a JSON decoder must undo
// before classifying (Python's json undoes all of them).
const (
	escPlain   uint8 = iota
	escLetter        // one ASCII letter as \u00XX
	escUnicode       // every non-ASCII character as \uXXXX (astral ones as pairs)
	escSlash         // '/' as \/
)

// needsCare marks the bytes that leave the plain copy loop of appendString:
// those JSON requires escaping, and 0xED, the lead byte of a WTF-8 surrogate
// that must be written as a \u escape to keep the file strict UTF-8.
var needsCare = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'], t[0xED] = true, true, true
	return t
}()

// shortEscape is the letter of each two-character escape appendString
// writes ('/' only reaches it in the escSlash style); the other control
// bytes take a \u escape.
var shortEscape = [256]byte{'"': '"', '\\': '\\', '\n': 'n', '\t': 't', '\r': 'r', '/': '/'}

const hexDigits = "0123456789abcdef"

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

// appendString appends s as a JSON string. s is UTF-8 in which lone
// surrogates may appear WTF-8 encoded (ED A0..BF xx): those are written as
// \uD8xx..\uDFxx escapes, which Python decodes back to the lone surrogate.
func appendString(b []byte, s string, style uint8) []byte {
	b = append(b, '"')
	letterDone := style != escLetter
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c < utf8.RuneSelf && !needsCare[c] && (letterDone || !isLetter(c)) && (style != escSlash || c != '/'):
			i++
			continue
		case c >= utf8.RuneSelf && !needsCare[c] && style != escUnicode:
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch e := shortEscape[c]; {
		case e != 0:
			b = append(b, '\\', e)
			i++
		case c < 0x20:
			b = appendU(b, rune(c))
			i++
		case c < utf8.RuneSelf:
			b = appendU(b, rune(c))
			letterDone = true
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				if !isWTF8Surrogate(s[i:]) {
					panic("synth: invalid UTF-8 in generated text")
				}
				r, n = rune(s[i+1]&0x3F)<<6|rune(s[i+2]&0x3F)|0xD000, 3
				b = appendU(b, r)
			} else if style != escUnicode {
				b = append(b, s[i:i+n]...)
			} else if r >= 0x10000 {
				r -= 0x10000
				b = appendU(appendU(b, 0xD800+r>>10), 0xDC00+r&0x3FF)
			} else {
				b = appendU(b, r)
			}
			i += n
		}
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// isWTF8Surrogate reports whether s starts with the three-byte WTF-8 form of
// a surrogate code point.
func isWTF8Surrogate(s string) bool {
	return len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF
}

// wtf8Surrogate returns the WTF-8 encoding of surrogate code point r, the
// form in which a lone surrogate travels in generated strings (and in which
// classify.Property accepts it).
func wtf8Surrogate(r rune) string {
	return string([]byte{0xED, byte(0xA0 | (r>>6)&0x1F), byte(0x80 | r&0x3F)})
}

// Small helpers for the "key": value layout Python's json.dumps uses.

func appendKey(b []byte, k string) []byte {
	b = appendString(b, k, escPlain)
	return append(b, ':', ' ')
}

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

func comma(b []byte) []byte { return append(b, ',', ' ') }
