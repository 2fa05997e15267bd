package gunzip

import "math/bits"

// A table entry packs how a Huffman symbol decodes into one uint32, so the
// decoding loop needs a single load per symbol:
//
//	bits 0-3   the codeword's length in bits (for a subtable pointer: the
//	           primary table's index width)
//	bits 4-7   kind flags, below; none set means a length or distance
//	bits 8-15  codeword plus extra bits, consumed together; for a subtable
//	           pointer, the subtable's index width
//	bits 16-31 the literal, the length or distance base, or the subtable's
//	           offset in the table
const (
	kindLiteral  = 0x10
	kindEnd      = 0x20 // end of block
	kindSubtable = 0x40
	kindInvalid  = 0x80 // a code the stream may not use
)

const (
	litBits    = 11 // primary index width of the literal/length table
	distBits   = 8  // of the distance table
	preBits    = 7  // the code lengths' code: its codes are at most 7 bits
	maxCodeLen = 15

	numLitLen = 288
	numDist   = 32

	// tableSize holds a primary table and its subtables: one per primary
	// index that some longer codeword starts with, so at most one per
	// symbol, each 2^(15-bits) entries. For literals and lengths that is
	// 2^11 + 288*2^4, for distances 2^8 + 32*2^7, both under 2^13. A power
	// of two, so that a subtable's index, masked, needs no bounds check in
	// the decoding loop.
	tableSize = 1 << 13
	tableMask = tableSize - 1
)

// table is a Huffman code's decoding table.
type table [tableSize]uint32

var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// litEntry is what literal/length symbol sym decodes to, less its
// codeword length.
func litEntry(sym int) uint32 {
	switch {
	case sym < 256:
		return kindLiteral | uint32(sym)<<16
	case sym == 256:
		return kindEnd
	case sym < 286:
		i := sym - 257
		return uint32(lengthBase[i])<<16 | uint32(lengthExtra[i])<<8
	}
	return kindInvalid
}

// distEntry is what distance symbol sym decodes to, less its codeword
// length.
func distEntry(sym int) uint32 {
	if sym < 30 {
		return uint32(distBase[sym])<<16 | uint32(distExtra[sym])<<8
	}
	return kindInvalid
}

// preEntry is what a code-length symbol decodes to: the symbol itself.
func preEntry(sym int) uint32 { return uint32(sym) << 16 }

// build fills table with the canonical Huffman code of lens: a primary
// table of 2^primary entries indexed by the next bits of the stream, and
// subtables for longer codewords. It reports false for a code that is
// over-subscribed or incomplete; as zlib does, a code of a single
// one-bit codeword and an empty code are accepted, their unused entries
// invalid, so that only a stream that uses them fails.
func build(t *table, lens []uint8, primary uint, entry func(int) uint32) bool {
	var count [maxCodeLen + 1]int
	maxLen := 0
	for _, l := range lens {
		count[l]++
		if int(l) > maxLen {
			maxLen = int(l)
		}
	}
	count[0] = 0
	size := 1 << primary
	tab := t[:size]
	if maxLen == 0 {
		for i := range tab {
			tab[i] = kindInvalid
		}
		return true
	}
	// Check the code is complete, and find each length's first codeword.
	var next [maxCodeLen + 2]int
	code := 0
	for l := 1; l <= maxCodeLen; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	left := 1
	for l := 1; l <= maxCodeLen; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
	}
	if left > 0 && !(maxLen == 1 && count[1] == 1) {
		return false
	}
	if left > 0 {
		for i := range tab {
			tab[i] = kindInvalid
		}
	}
	sub := uint(0)
	if maxLen > int(primary) {
		sub = uint(maxLen) - primary
	}
	subSize := 1 << sub
	// subOf maps a primary index to its subtable's offset, made on first
	// use; 0 means none yet.
	var subOf [1 << litBits]uint32
	for sym, l := range lens {
		if l == 0 {
			continue
		}
		cw := next[l]
		next[l]++
		rev := int(bits.Reverse16(uint16(cw)) >> (16 - l))
		// The entry goes at every index that starts with its codeword's
		// bits: in the primary table, or past the primary bits in the
		// subtable of the codeword's first ones.
		n, base, from, to := uint(l), 0, rev, size
		if n > primary {
			p := rev & (size - 1)
			off := subOf[p]
			if off == 0 {
				if len(tab)+subSize > tableSize {
					return false // not a prefix code: it has more subtables than symbols
				}
				off = uint32(len(tab))
				subOf[p] = off
				tab = tab[:len(tab)+subSize]
				for i := off; i < off+uint32(subSize); i++ {
					tab[i] = kindInvalid
				}
				tab[p] = kindSubtable | uint32(primary) | uint32(sub)<<8 | off<<16
			}
			n, base, from, to = n-primary, int(off), rev>>primary, subSize
		}
		e := entry(sym) | uint32(n)
		if e&(kindLiteral|kindEnd|kindInvalid) == 0 {
			// Lengths and distances consume their extra bits with the
			// codeword: the total is codeword plus extra.
			e += uint32(n) << 8
		}
		for i := from; i < to; i += 1 << n {
			tab[base+i] = e
		}
	}
	return true
}
