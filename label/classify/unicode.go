package classify

//go:generate sh -c "python3 gen_unicode.py > unicode_tables.go"

import "unicode/utf8"

// A cell is one character of the lowered haystack as the regex engine sees
// it. Only three things about a character decide a label: whether it is in
// the IGNORECASE boundary class [a-z0-9_] (and which pattern character it
// matches), whether it is a Unicode word character (\w, for \b), and whether
// it is exactly the space of the phrases "amount in" and "currency code".
type cell struct {
	// fold is the pattern character the cell matches under IGNORECASE when
	// it is in the boundary class, else 0.
	fold byte
	// word reports a \w character (every boundary-class character is one).
	word bool
	// space reports U+0020, the only character a pattern space matches.
	space bool
}

// asciiFold maps an ASCII byte to the pattern character its lowercase
// matches, or 0 outside the boundary class. Bytes >= 0x80 map to 0xFF, the
// marker for the multi-byte path.
var asciiFold = func() (fold [256]byte) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 0x80:
			fold[c] = 0xFF
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
			fold[c] = byte(c)
		case 'A' <= c && c <= 'Z':
			fold[c] = byte(c) + ('a' - 'A')
		}
	}
	return fold
}()

// wordBMP is wordRanges as a bitmap over the Basic Multilingual Plane, where
// nearly all non-ASCII text lives: one load instead of a binary search.
var wordBMP = func() (bmp [1024]uint64) {
	for _, r := range wordRanges {
		for c := r[0]; c <= r[1] && c < 0x10000; c++ {
			bmp[c>>6] |= 1 << (c & 63)
		}
	}
	return bmp
}()

// isWordRune reports whether str.lower() of r is a \w character outside the
// boundary class. r >= 0x80.
func isWordRune(r rune) bool {
	if r < 0x10000 {
		return wordBMP[r>>6]&(1<<(r&63)) != 0
	}
	lo, hi := 0, len(wordRanges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case r < wordRanges[m][0]:
			hi = m
		case r > wordRanges[m][1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// lowerCells appends the cells of str.lower() of the non-ASCII rune r. Only
// four code points lower to boundary-class characters (gen_unicode.py
// asserts the list): U+0130 'İ' lowers to "i" + U+0307, U+0131 'ı' and
// U+017F 'ſ' are matched by the pattern letters i and s through sre's case
// equivalences, and U+212A KELVIN SIGN lowers to "k". utf8.RuneError, which
// stands for invalid bytes and for lone surrogates kept as WTF-8, is neither
// a word character nor in the class, like a surrogate in Python.
func lowerCells(dst []cell, r rune) []cell {
	switch r {
	case 0x130:
		return append(dst, cell{fold: 'i', word: true}, cell{})
	case 0x131:
		return append(dst, cell{fold: 'i', word: true})
	case 0x17F:
		return append(dst, cell{fold: 's', word: true})
	case 0x212A:
		return append(dst, cell{fold: 'k', word: true})
	}
	return append(dst, cell{word: isWordRune(r)})
}

// decodeRune is utf8.DecodeRune for both string and []byte without
// converting (which would allocate for []byte).
func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], s)
	return utf8.DecodeRune(buf[:n])
}
