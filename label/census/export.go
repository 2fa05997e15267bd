package census

import "unicode/utf8"

// Helpers for packages that read a tool's Schema text themselves, so that
// they unescape strings and see values exactly as the decoders do.

// AppendUnescaped appends the decoded form of raw, the content between the
// quotes of a JSON string that a Decoder has accepted (Tool.Schema holds
// only such strings): escapes decoded as CPython's json decodes them,
// surrogate pairs combined, a lone surrogate kept in its WTF-8 form.
func AppendUnescaped(dst, raw []byte) []byte { return appendUnescaped(dst, raw) }

// AppendJSONString appends s, a string as a Decoder gives it (WTF-8), as
// a JSON string the way CPython's json.dumps(s, ensure_ascii=False) writes
// it: UTF-8 kept as is, a lone surrogate written as its \udXXX escape,
// any other invalid byte as \ufffd. It is the inverse of AppendUnescaped,
// for packages that write decoded names back out.
func AppendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
			i++
		case c < 0x20:
			switch c {
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			}
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || n > 1 {
				b = append(b, s[i:i+n]...)
				i += n
				continue
			}
			if c == 0xED && i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
				u := rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
				b = append(b, '\\', 'u', hex[u>>12], hex[u>>8&15], hex[u>>4&15], hex[u&15])
				i += 3
				continue
			}
			b = append(b, `\ufffd`...)
			i++
		}
	}
	return append(b, '"')
}
