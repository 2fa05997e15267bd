// Package sha256x8 computes the SHA-256 of many messages at once. On amd64
// processors with AVX2 it hashes eight independent messages together, one
// in each 32-bit lane of the YMM registers: several times faster per byte
// than crypto/sha256's single-stream code where the processor has no SHA
// extensions (SHA-NI). Where AVX-512VL is available (Skylake-SP and
// Cascade Lake Xeons, which have no SHA-NI; AMD Zen 4 and 5, which have
// both) it uses that extension's rotate and three-input logic instructions
// on the same registers, which beats even SHA-NI. Elsewhere it calls
// crypto/sha256. Built with the purego tag it has no assembly: Sum calls
// crypto/sha256, and the eight lanes (for the tests) are portable Go.
package sha256x8

//go:generate go -C asm run . -out ../block8_amd64.s

import (
	"crypto/sha256"
	"encoding/binary"
)

// minMulti is the smallest batch worth hashing eight-wide: below it most
// lanes would idle and crypto/sha256 per message costs about the same.
const minMulti = 3

// forceMulti makes Sum take the eight-lane path for every batch whenever
// the processor can run it, so tests and benchmarks exercise it on
// processors where crypto/sha256 would otherwise be chosen.
var forceMulti bool

// Sum writes the SHA-256 of msgs[i] into out[i] for every i (len(out) >= len(msgs)).
// Results are identical to crypto/sha256.Sum256 for every input.
func Sum(msgs [][]byte, out [][32]byte) {
	out = out[:len(msgs)] // panics early if out is too short
	if canMulti && (forceMulti || multi && len(msgs) >= minMulti) {
		sum8(msgs, out)
		return
	}
	for i, m := range msgs {
		out[i] = sha256.Sum256(m)
	}
}

// Multi reports whether Sum hashes several messages at once on this CPU
// (amd64 with AVX-512VL, or with AVX2 and without SHA-NI); otherwise Sum
// calls crypto/sha256.Sum256 for each message, which is then the faster
// way.
func Multi() bool { return multi }

// iv is the SHA-256 initial hash value (FIPS 180-4, section 5.3.3).
var iv = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

// zeroBlock is what idle lanes compress; their results are discarded.
var zeroBlock [64]byte

// lane is the progress of one message through one lane.
type lane struct {
	idx     int    // index into msgs and out; -1 when the lane is idle
	full    []byte // the message's full blocks, hashed in place
	off     int    // offset of the block being hashed, in full or in the tail
	inTail  bool   // the lane is hashing its batch.tail blocks
	end     int    // len(full), then tailEnd once in the tail
	tailEnd int    // 64 or 128: the length of the padded tail
}

// batch is everything sum8 needs, kept in one value so it lives on the
// stack: block8 is marked noescape.
type batch struct {
	state  [8][8]uint32 // state[word][lane]
	blocks [8]*byte     // block8's input: the block each lane hashes next
	lanes  [8]lane
	tail   [8][128]byte // padded last block(s) of each lane's message
}

// sum8 hashes msgs eight at a time with block8. Each lane takes the next
// unhashed message as soon as its previous one is done, so messages of
// different lengths keep all lanes busy until the batch runs out; lanes
// left without a message then hash zeroBlock, and their result is ignored.
func sum8(msgs [][]byte, out [][32]byte) {
	var b batch
	pending := 0 // next message to give a lane
	active := 0
	for l := range b.lanes {
		if b.load(l, msgs, &pending) {
			active++
		}
		if b.lanes[l].inTail {
			b.blocks[l] = &b.tail[l][0]
		}
	}
	for active > 0 {
		if useAVX512 {
			block8AVX512(&b.state, &b.blocks)
		} else {
			block8(&b.state, &b.blocks)
		}
		for l := range b.lanes {
			ln := &b.lanes[l]
			if ln.idx < 0 {
				continue
			}
			ln.off += 64
			if ln.off < ln.end {
				if ln.inTail {
					b.blocks[l] = &b.tail[l][ln.off]
				} else {
					b.blocks[l] = &ln.full[ln.off]
				}
				continue
			}
			if !ln.inTail {
				ln.off, ln.end, ln.inTail = 0, ln.tailEnd, true
				b.blocks[l] = &b.tail[l][0]
				continue
			}
			d := &out[ln.idx]
			for w := range 8 {
				binary.BigEndian.PutUint32(d[w*4:], b.state[w][l])
			}
			if !b.load(l, msgs, &pending) {
				active--
			} else if ln.inTail {
				b.blocks[l] = &b.tail[l][0]
			}
		}
	}
}

// load gives lane l the message msgs[*pending], if any is left, and
// reports whether it did. It resets the lane's state to the IV, writes the
// message's padded tail and points the lane at its first block.
func (b *batch) load(l int, msgs [][]byte, pending *int) bool {
	ln := &b.lanes[l]
	if *pending >= len(msgs) {
		*ln = lane{idx: -1}
		b.blocks[l] = &zeroBlock[0]
		return false
	}
	i := *pending
	*pending++
	m := msgs[i]
	full := len(m) &^ 63
	rest := m[full:]
	// Padding: 0x80, zeros, then the bit length as a 64-bit big-endian
	// number ending the last block. It fits one block if rest leaves room
	// for the 0x80 byte and the 8 length bytes.
	tails := 1
	if len(rest) >= 56 {
		tails = 2
	}
	t := b.tail[l][:tails*64]
	copy(t, rest)
	t[len(rest)] = 0x80
	clear(t[len(rest)+1 : len(t)-8])
	binary.BigEndian.PutUint64(t[len(t)-8:], uint64(len(m))*8)
	for w := range 8 {
		b.state[w][l] = iv[w]
	}
	*ln = lane{idx: i, full: m[:full], end: full, tailEnd: len(t)}
	if full == 0 {
		// The caller points blocks[l] at the tail: a method storing a
		// pointer into b in b would make b escape to the heap.
		ln.end, ln.inTail = ln.tailEnd, true
	} else {
		b.blocks[l] = &m[0]
	}
	return true
}
