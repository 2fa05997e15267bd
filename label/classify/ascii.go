package classify

import "math/bits"

// The ASCII fast path, for the classes and the surface signals alike, each
// with its run table (table.go). Nearly all of the haystack is ASCII, and in
// ASCII the boundary class [a-z0-9_] (under IGNORECASE) and \w are the same
// set, so a label is decided by the maximal class runs alone. The scan finds them 64
// bytes at a time: a SWAR test of eight bytes per word gives a 64-bit class
// mask per block, the ends of runs are bits of that mask, and each run's
// length is a count of leading ones. A run is looked at only when its length,
// first and last letter fit some word of the table, so the per-byte work
// has no data-dependent branch and the per-run work is one well-predicted
// table test.
//
// The two pieces of the haystack are independent: the joint " : " ends every
// run and breaks every phrase (a phrase needs exactly one space between its
// words). So a piece that holds any non-ASCII byte is left whole to the exact
// matcher of match.go, and the labels of the pieces are or-ed.

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// rep repeats a byte over a word.
func rep(b byte) uint64 { return lsb * uint64(b) }

// le64 loads s[0:8] little-endian; the compiler merges the byte loads.
func le64[T ~string | ~[]byte](s T) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// le32 loads s[0:4] little-endian.
func le32[T ~string | ~[]byte](s T) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}

// load8 returns s[i:i+8] as a word, the bytes past the end of s as zeros
// (a zero byte is outside the class). i < len(s).
func load8[T ~string | ~[]byte](s T, i int) uint64 {
	if i+8 <= len(s) {
		return le64(s[i:])
	}
	return loadTail(s, i)
}

// loadTail is load8 for fewer than eight bytes left, without a loop: two
// loads that may overlap (the overlapping bytes are equal, so or-ing them is
// harmless), as the short strings of property names need.
func loadTail[T ~string | ~[]byte](s T, i int) uint64 {
	n := len(s)
	r := n - i
	switch {
	case n >= 8:
		return le64(s[n-8:]) >> (8 * uint(8-r))
	case r >= 4:
		return le32(s[i:]) | le32(s[n-4:])<<(8*uint(r-4))
	default:
		return uint64(s[i]) | uint64(s[i+r/2])<<(8*uint(r/2)) | uint64(s[n-1])<<(8*uint(r-1))
	}
}

// classBytes sets the top bit of every byte of x that is in the boundary
// class, and of no other, for x without bytes >= 0x80. No byte of a sum
// below carries into the next: each is at most 0x7F + 0x7F.
func classBytes(x uint64) uint64 {
	l := x | lsb*0x20 // A-Z to a-z, '_' to 0x7F
	letter := (l + lsb*(0x80-'a')) &^ (l + lsb*(0x7F-'z'))
	digit := (x + lsb*(0x80-'0')) &^ (x + lsb*(0x7F-'9'))
	under := ^((x ^ lsb*'_') + lsb*0x7F)
	return (letter | digit | under) & msb
}

// movemask gathers the top bits of the eight bytes of x into bits 0-7.
func movemask(x uint64) uint64 { return ((x >> 7) & lsb) * 0x0102040810204080 >> 56 }

// blockMask returns the class mask of s[i:i+64] (bit k for byte i+k), and
// the top bits of its bytes, which are non-zero if any is not ASCII.
func blockMask[T ~string | ~[]byte](s T, i int) (mask, high uint64) {
	if i+64 <= len(s) {
		b := s[i : i+64]
		for k := 0; k < 64; k += 8 {
			x := le64(b[k:])
			high |= x
			mask |= movemask(classBytes(x)) << uint(k)
		}
		return mask, high & msb
	}
	k := uint(0)
	for ; i+8 <= len(s); i, k = i+8, k+8 {
		x := le64(s[i:])
		high |= x
		mask |= movemask(classBytes(x)) << k
	}
	if i < len(s) {
		x := loadTail(s, i)
		high |= x
		mask |= movemask(classBytes(x)) << k
	}
	return mask, high & msb
}

// foldKey folds a class byte for the keys: letters to lowercase, digits
// unchanged, '_' to 0x7F. On class bytes it is one-to-one.
func foldKey(c byte) byte { return c | 0x20 }

// lengthMask keeps the low n bytes of a word, n <= 8.
func lengthMask(n int) uint64 { return 1<<(8*uint(n)) - 1 }

// runKey returns the folded key of the class run s[i:i+n], n <= maxRun.
func runKey[T ~string | ~[]byte](s T, i, n int) (lo, hi uint64) {
	lo = load8(s, i) | rep(0x20)
	if n <= 8 {
		return lo & lengthMask(n), 0
	}
	return lo, (load8(s, i+8) | rep(0x20)) & lengthMask(n-8)
}

// wordBefore reports whether the class run that ends just before s[end] is
// exactly w (lowercase letters): end-len(w) is its start and the byte
// before that, if any, is outside the class.
func wordBefore[T ~string | ~[]byte](s T, end int, w string) bool {
	start := end - len(w)
	if start < 0 || start > 0 && asciiFold[s[start-1]] != 0 {
		return false
	}
	for k := 0; k < len(w); k++ {
		if s[start+k]|0x20 != w[k] {
			return false
		}
	}
	return true
}

// keyValue returns the value of the class run at s[i] whose folded key is
// lo, hi: its word's, if t holds the word. In ASCII every run is a whole \w
// word, so a phrase word needs no purity check; "in" and "code" look back
// across exactly one space.
func keyValue[T ~string | ~[]byte](t *runTable, s T, i int, lo, hi uint64) uint64 {
	e := &t.entries[t.slot[t.hash(lo, hi)]]
	if e.lo != lo || e.hi != hi {
		return 0
	}
	if e.phrase == 0 {
		return e.value
	}
	return e.value | uint64(phraseLabels(s, i, e.phrase))
}

// phraseLabels adds the money label of \b(amount in|monetary|currency
// code)\b for the phrase word ph found at s[i].
func phraseLabels[T ~string | ~[]byte](s T, i int, ph uint8) Set {
	switch ph {
	case phMonetary:
		return MoneyAmount
	case phIn:
		if i > 0 && s[i-1] == ' ' && wordBefore(s, i-1, "amount") {
			return MoneyAmount
		}
	case phCode:
		if i > 0 && s[i-1] == ' ' && wordBefore(s, i-1, "currency") {
			return MoneyAmount
		}
	}
	return 0
}

// asciiRuns returns the values of the runs of s that t holds, or-ed, and
// false if s holds a non-ASCII byte (the caller then uses the byte-by-byte
// scanner of match.go).
func asciiRuns[T ~string | ~[]byte](t *runTable, s T) (uint64, bool) {
	if len(s) <= maxRun {
		return shortRuns(t, s)
	}
	var v, prev uint64
	cur, high := blockMask(s, 0)
	if high != 0 {
		return 0, false
	}
	for base := 0; base < len(s); base += 64 {
		var next uint64
		if base+64 < len(s) {
			next, high = blockMask(s, base+64)
			if high != 0 {
				return 0, false
			}
		}
		v |= blockRuns(t, s, base, prev, cur, next)
		prev, cur = cur, next
	}
	return v, true
}

// blockRuns returns the values of the runs that end in the block at base,
// whose class mask is cur, between the masks of the blocks either side.
func blockRuns[T ~string | ~[]byte](t *runTable, s T, base int, prev, cur, next uint64) uint64 {
	var v uint64
	// The last byte of each run: in the class, and the next byte (possibly
	// in the next block) not.
	ends := cur &^ (cur>>1 | next<<63)
	for ends != 0 {
		e := bits.TrailingZeros64(ends)
		ends &= ends - 1
		// Bring the run's last bit to the top, with the previous block's
		// bits below the block's first; the run's length is the count of
		// leading ones (64 for runs of 64 or more, which are too long for
		// any word anyway).
		y := cur<<(63-uint(e)) | prev>>(uint(e)+1)
		n := bits.LeadingZeros64(^y)
		if n > maxRun {
			continue
		}
		i := base + e + 1 - n
		if !t.mayHold(n, foldKey(s[i]), foldKey(s[i+n-1])) {
			continue
		}
		lo, hi := runKey(s, i, n)
		v |= keyValue(t, s, i, lo, hi)
	}
	return v
}

// shortRuns is asciiRuns for a piece of at most maxRun bytes, most of them
// (property names above all): two words hold it, and when it is one run, as
// a snake_case or camelCase name is, those words folded are its key.
func shortRuns[T ~string | ~[]byte](t *runTable, s T) (uint64, bool) {
	n := len(s)
	if n == 0 {
		return 0, true
	}
	var x0, x1 uint64
	if n >= 8 {
		x0, x1 = le64(s), le64(s[n-8:])>>(8*uint(16-n))
	} else {
		x0 = loadTail(s, 0)
	}
	if (x0|x1)&msb != 0 {
		return 0, false
	}
	c0, c1 := classBytes(x0), classBytes(x1)
	m := movemask(c0) | movemask(c1)<<8
	if m == 1<<uint(n)-1 {
		// Folding sets 0x20 in the class bytes only, so the zeros past
		// the end stay zero, as in a key.
		return keyValue(t, s, 0, x0|c0>>2, x1|c1>>2), true
	}
	return blockRuns(t, s, 0, 0, m, 0), true
}
