package sensitivity

// The name rewrites of camel_case and word_split. Both place a boundary
// where Python's
//
//	re.sub(r'(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])', sep, name)
//
// inserts sep. The classes are ASCII and the pattern is applied without
// IGNORECASE, so a boundary needs ASCII characters on both sides: working on
// the UTF-8 bytes finds the same positions as sre does on the code points
// (no byte of a multi-byte sequence is ASCII). Every match is empty and sre
// allows one empty match per position, so each boundary gets one sep.

func isUpper(c byte) bool        { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool        { return 'a' <= c && c <= 'z' }
func isLowerOrDigit(c byte) bool { return isLower(c) || '0' <= c && c <= '9' }

// boundary reports whether the pattern matches at position i of name,
// between name[i-1] and name[i].
func boundary(name []byte, i int) bool {
	if i == 0 || i >= len(name) || !isUpper(name[i]) {
		return false
	}
	prev := name[i-1]
	return isLowerOrDigit(prev) || isUpper(prev) && i+1 < len(name) && isLower(name[i+1])
}

// CamelCase appends name as a snake_case author would have written it: an
// underscore at every camelCase boundary (privateKey → private_Key,
// webhookURL → webhook_URL, HTTPServer → HTTP_Server). Case is kept: the
// classifier lowers the haystack afterwards.
func CamelCase(dst, name []byte) []byte {
	for i, c := range name {
		if boundary(name, i) {
			dst = append(dst, '_')
		}
		dst = append(dst, c)
	}
	return dst
}

// WordSplit appends name split into words: a space at every camelCase
// boundary, and a space in place of every '_', '-' and '.'
// (access_token → "access token", outputPath → "output Path").
func WordSplit(dst, name []byte) []byte {
	for i, c := range name {
		if boundary(name, i) {
			dst = append(dst, ' ')
		}
		switch c {
		case '_', '-', '.':
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// mayChange marks the bytes without which neither rewrite changes a name:
// a boundary needs an upper-case letter, and word_split also replaces
// '_', '-' and '.'.
var mayChange = func() (t [256]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	t['_'], t['-'], t['.'] = true, true, true
	return t
}()
