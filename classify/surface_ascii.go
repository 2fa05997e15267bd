package classify

import (
	"bytes"
	"math/bits"
)

// The ASCII fast path of the surface matcher, for descriptions: the same
// block scan as ascii.go's. A description is scanned on its own, since the
// joint " : " ends the name's last word and any link skip; one that holds a
// non-ASCII byte or a link ("://") is left to surfaceFeed.

// surfaceKey is a surface word as its folded bytes in two words (see
// foldWord), zero past its end.
type surfaceKey struct {
	lo, hi uint64
	lists  uint64
}

// surfaceKeys holds the words by length and the low five bits of the
// folded first byte; surfaceFilter has bit (last byte & 63) set when some
// word of surfaceKeys[n][first] may end with that byte.
var (
	surfaceKeys   [maxSurfaceRun + 1][32][]surfaceKey
	surfaceFilter [maxSurfaceRun + 1][32]uint64
)

// addSurfaceKey indexes the folded key of w, a word of [a-z0-9_].
func addSurfaceKey(w string, lists uint64) {
	var key [16]byte
	for i := 0; i < len(w); i++ {
		key[i] = foldKey(w[i])
	}
	n, first := len(w), key[0]&31
	lo, hi := le64(key[:8]), le64(key[8:])
	bucket := &surfaceKeys[n][first]
	for i := range *bucket {
		if (*bucket)[i].lo == lo && (*bucket)[i].hi == hi {
			(*bucket)[i].lists |= lists
			return
		}
	}
	*bucket = append(*bucket, surfaceKey{lo, hi, lists})
	surfaceFilter[n][first] |= 1 << (key[n-1] & 63)
}

var linkMark = []byte("://")

// surfaceASCII returns the word lists the description s meets, and false
// if it holds a non-ASCII byte or a link.
func surfaceASCII(s []byte) (uint64, bool) {
	if bytes.Contains(s, linkMark) {
		return 0, false
	}
	var lists, prev uint64
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
		ends := cur &^ (cur>>1 | next<<63)
		for ends != 0 {
			e := bits.TrailingZeros64(ends)
			ends &= ends - 1
			y := cur<<(63-uint(e)) | prev>>(uint(e)+1)
			n := bits.LeadingZeros64(^y)
			if n > maxSurfaceRun {
				continue
			}
			i := base + e + 1 - n
			first := foldKey(s[i]) & 31
			if surfaceFilter[n][first]&(1<<(foldKey(s[i+n-1])&63)) == 0 {
				continue
			}
			lo, hi := runKey(s, i, n)
			for _, k := range surfaceKeys[n][first] {
				if k.lo == lo && k.hi == hi {
					lists |= k.lists
					break
				}
			}
		}
		prev, cur = cur, next
	}
	return lists, true
}
