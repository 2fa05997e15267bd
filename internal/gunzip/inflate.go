package gunzip

import (
	"encoding/binary"
	"sync"
)

// The decoder's states between calls of inflate.
const (
	stBlockHeader = iota // at the start of a block
	stHuffman            // inside a Huffman-coded block
	stStored             // inside a stored block, stored bytes left
	stEnd                // the member's last block has ended
)

// inflate decodes into the window until it is full to its limit or the
// member's deflate stream ends.
func (z *Reader) inflate() error {
	for z.w < z.wlimit {
		switch z.state {
		case stBlockHeader:
			if z.final {
				z.state = stEnd
				return nil
			}
			if err := z.blockHeader(); err != nil {
				return err
			}
		case stHuffman:
			if err := z.huffman(); err != nil {
				return err
			}
		case stStored:
			if err := z.stored(); err != nil {
				return err
			}
		case stEnd:
			return nil
		}
	}
	return nil
}

// need makes sure the bit buffer holds at least 56 bits.
func (z *Reader) need() error {
	if z.iend-z.ip >= 8 {
		z.bitbuf |= binary.LittleEndian.Uint64(z.in[z.ip:]) << (z.bitsleft & 63)
		z.ip += int(63-z.bitsleft) >> 3
		z.bitsleft |= 56
		return nil
	}
	return z.refillSlow()
}

// refillSlow fills the bit buffer near the end of the input buffer: it
// reads more input, and past the end of the file it feeds zero bytes,
// counted, so that the stream's last bits decode; a stream that needs
// more of them than a bit buffer holds is truncated.
func (z *Reader) refillSlow() error {
	if err := z.more(8); err != nil {
		return err
	}
	if z.iend-z.ip >= 8 {
		return z.need()
	}
	for z.bitsleft <= 56 {
		if z.ip < z.iend {
			z.bitbuf |= uint64(z.in[z.ip]) << z.bitsleft
			z.ip++
		} else {
			z.overread++
			if z.overread > 8 {
				return z.truncated()
			}
		}
		z.bitsleft += 8
	}
	return nil
}

// bits takes n (at most 32) bits from the stream.
func (z *Reader) bits(n uint) (uint32, error) {
	if z.bitsleft < n {
		if err := z.need(); err != nil {
			return 0, err
		}
	}
	v := uint32(z.bitbuf & (1<<n - 1))
	z.bitbuf >>= n
	z.bitsleft -= n
	return v, nil
}

// align drops the bits up to the next byte and gives the whole bytes the
// bit buffer holds back to the input.
func (z *Reader) align() error {
	z.bitsleft &^= 7
	n := int(z.bitsleft >> 3)
	if n < z.overread {
		return z.truncated()
	}
	z.ip -= n - z.overread
	z.overread = 0
	z.bitbuf, z.bitsleft = 0, 0
	return nil
}

// blockHeader reads a block's header and, for a Huffman-coded block, its
// tables.
func (z *Reader) blockHeader() error {
	h, err := z.bits(3)
	if err != nil {
		return err
	}
	z.final = h&1 != 0
	switch h >> 1 {
	case 0:
		if err := z.align(); err != nil {
			return err
		}
		if err := z.more(4); err != nil {
			return err
		}
		if z.iend-z.ip < 4 {
			return z.truncated()
		}
		n := binary.LittleEndian.Uint16(z.in[z.ip:])
		nn := binary.LittleEndian.Uint16(z.in[z.ip+2:])
		z.ip += 4
		if n != ^nn {
			return z.corrupt()
		}
		z.storedLeft = int(n)
		z.state = stStored
	case 1:
		z.lit, z.dist = fixedTables()
		z.state = stHuffman
	case 2:
		if err := z.dynamicTables(); err != nil {
			return err
		}
		z.lit, z.dist = z.litBuf, z.distBuf
		z.state = stHuffman
	default:
		return z.corrupt()
	}
	return nil
}

// codeOrder is the order in which a dynamic block lists the code lengths'
// code lengths.
var codeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamicTables reads a dynamic block's code lengths and builds its
// tables.
func (z *Reader) dynamicTables() error {
	h, err := z.bits(14)
	if err != nil {
		return err
	}
	nlit, ndist, nclen := int(h&31)+257, int(h>>5&31)+1, int(h>>10)+4
	if nlit > 286 || ndist > 30 {
		return z.corrupt()
	}
	var clens [19]uint8
	for i := 0; i < nclen; i++ {
		v, err := z.bits(3)
		if err != nil {
			return err
		}
		clens[codeOrder[i]] = uint8(v)
	}
	// The code lengths' code is done with before the literal/length
	// table is built: it borrows that table.
	pre := z.litBuf
	if !build(pre, clens[:], preBits, preEntry) {
		return z.corrupt()
	}
	var lens [numLitLen + numDist]uint8
	for i := 0; i < nlit+ndist; {
		if z.bitsleft < 14 {
			if err := z.need(); err != nil {
				return err
			}
		}
		e := pre[z.bitbuf&(1<<preBits-1)]
		if e&kindInvalid != 0 {
			return z.corrupt()
		}
		n := uint(e & 15)
		z.bitbuf >>= n
		z.bitsleft -= n
		sym := e >> 16
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return z.corrupt()
			}
			val = lens[i-1]
			rep = 3 + int(z.bitbuf&3)
			z.bitbuf >>= 2
			z.bitsleft -= 2
		case 17:
			rep = 3 + int(z.bitbuf&7)
			z.bitbuf >>= 3
			z.bitsleft -= 3
		default:
			rep = 11 + int(z.bitbuf&127)
			z.bitbuf >>= 7
			z.bitsleft -= 7
		}
		if i+rep > nlit+ndist {
			return z.corrupt()
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	if !build(z.litBuf, lens[:nlit], litBits, litEntry) {
		return z.corrupt()
	}
	if !build(z.distBuf, lens[nlit:nlit+ndist], distBits, distEntry) {
		return z.corrupt()
	}
	return nil
}

// stored copies a stored block's bytes.
func (z *Reader) stored() error {
	for z.storedLeft > 0 && z.w < z.wlimit {
		if z.ip == z.iend {
			if err := z.more(1); err != nil {
				return err
			}
			if z.ip == z.iend {
				return z.truncated()
			}
		}
		n := copy(z.win[z.w:min(z.w+z.storedLeft, z.wlimit)], z.in[z.ip:z.iend])
		z.w += n
		z.ip += n
		z.storedLeft -= n
	}
	if z.storedLeft == 0 {
		z.state = stBlockHeader
	}
	return nil
}

// fixedTables are the tables of the fixed Huffman codes, built on first
// use.
var fixedTables = sync.OnceValues(func() (*table, *table) {
	var lens [numLitLen]uint8
	for i := range lens {
		switch {
		case i < 144:
			lens[i] = 8
		case i < 256:
			lens[i] = 9
		case i < 280:
			lens[i] = 7
		default:
			lens[i] = 8
		}
	}
	lit, dist := new(table), new(table)
	build(lit, lens[:], litBits, litEntry)
	var dl [numDist]uint8
	for i := range dl {
		dl[i] = 5
	}
	build(dist, dl[:], distBits, distEntry)
	return lit, dist
})

// huffman decodes a Huffman-coded block's symbols until the window is
// full to its limit or the block ends. The bit buffer, input and window
// positions live in locals for the loop and go back to z on every exit.
// Each step ends by refilling the bit buffer and looking up the next
// symbol's entry, so that the load is under way while a match is copied.
func (z *Reader) huffman() error {
	bitbuf, bitsleft := z.bitbuf, z.bitsleft
	in, ip := z.in[:z.iend], z.ip
	win, w, wlimit := z.win, z.w, z.wlimit
	lit, dist, hist := z.lit, z.dist, z.hist
	// fake is how many of the bit buffer's top bits are the zeros fed past
	// the end of the input: a symbol that reaches into them is not in the
	// stream, and its bytes must not reach the output.
	fake := uint(z.overread) * 8
	save := func() {
		z.bitbuf, z.bitsleft, z.ip, z.w = bitbuf, bitsleft, ip, w
	}
	// refill leaves at least 56 bits in the buffer: a length and a
	// distance, each with its extra bits, take at most 48.
	refill := func() error {
		if ip+8 <= len(in) {
			bitbuf |= binary.LittleEndian.Uint64(in[ip:]) << (bitsleft & 63)
			ip += int(63-bitsleft) >> 3
			bitsleft |= 56
			return nil
		}
		save()
		if err := z.refillSlow(); err != nil {
			return err
		}
		bitbuf, bitsleft = z.bitbuf, z.bitsleft
		in, ip = z.in[:z.iend], z.ip
		fake = uint(z.overread) * 8
		return nil
	}
	if err := refill(); err != nil {
		return err
	}
	e := lit[bitbuf&(1<<litBits-1)]
	for w < wlimit {
		if e&kindSubtable != 0 {
			bitbuf >>= litBits
			bitsleft -= litBits
			e = lit[(e>>16+uint32(bitbuf&(1<<(e>>8&15)-1)))&tableMask]
		}
		if e&kindLiteral != 0 {
			// Up to three literals on one refill: the first takes at
			// most 15 of the 56 bits, the next two (from the primary
			// table alone) 11 each.
			for k := 1; ; k++ {
				n := uint(e & 15)
				bitbuf >>= n
				bitsleft -= n
				if bitsleft < fake {
					save()
					return z.truncated()
				}
				win[w] = byte(e >> 16)
				w++
				e = lit[bitbuf&(1<<litBits-1)]
				if k == 3 || e&kindLiteral == 0 || w >= wlimit {
					break
				}
			}
			if err := refill(); err != nil {
				return err
			}
			e = lit[bitbuf&(1<<litBits-1)]
			continue
		}
		if e&(kindEnd|kindInvalid) != 0 {
			if e&kindInvalid != 0 {
				save()
				return z.corrupt()
			}
			n := uint(e & 15)
			bitbuf >>= n
			bitsleft -= n
			z.state = stBlockHeader
			break
		}
		total := uint(e >> 8 & 0xff)
		length := int(e>>16) + int((bitbuf&(1<<total-1))>>(e&15))
		bitbuf >>= total
		bitsleft -= total

		e = dist[bitbuf&(1<<distBits-1)]
		if e&kindSubtable != 0 {
			bitbuf >>= distBits
			bitsleft -= distBits
			e = dist[(e>>16+uint32(bitbuf&(1<<(e>>8&15)-1)))&tableMask]
		}
		if e&kindInvalid != 0 {
			save()
			return z.corrupt()
		}
		total = uint(e >> 8 & 0xff)
		d := int(e>>16) + int((bitbuf&(1<<total-1))>>(e&15))
		bitbuf >>= total
		bitsleft -= total
		if bitsleft < fake {
			save()
			return z.truncated()
		}
		if d > w-hist {
			save()
			return z.corrupt()
		}
		if err := refill(); err != nil {
			return err
		}
		e = lit[bitbuf&(1<<litBits-1)]

		src, end := w-d, w+length
		switch {
		case length > 40 && d >= length:
			copy(win[w:end], win[src:])
			w = end
		case d >= 8:
			// Sixteen bytes at once cover most matches, and eight at a
			// time the rest (copyMatch8, without bounds checks but in the
			// purego build: 12% of the time to inflate a census file).
			// hist <= src < w < wlimit, so the stores end before
			// max(w+16, end+8) <= wlimit+maxMatch+7, inside the window's
			// tail (winSize), and the loads before them; TestWindowBound
			// holds this.
			copyMatch8(win, w, src, end)
			w = end
		case d == 1:
			b := win[src]
			for ; w < end; w++ {
				win[w] = b
			}
		default:
			for ; w < end; w++ {
				win[w] = win[src]
				src++
			}
		}
	}
	save()
	return nil
}
