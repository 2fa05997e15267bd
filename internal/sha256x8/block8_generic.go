package sha256x8

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/atlas-reproduce/atlas-reproduce/internal/sha256x8/internal/roundk"
)

// block8Generic is block8 in plain Go, one lane after the other: the
// implementation on architectures without the assembly, and the reference
// the assembly is tested against.
func block8Generic(state *[8][8]uint32, blocks *[8]*byte) {
	for l := range 8 {
		p := (*[64]byte)(unsafe.Pointer(blocks[l]))
		var w [64]uint32
		for t := range 16 {
			w[t] = binary.BigEndian.Uint32(p[t*4:])
		}
		for t := 16; t < 64; t++ {
			s0 := bits.RotateLeft32(w[t-15], -7) ^ bits.RotateLeft32(w[t-15], -18) ^ w[t-15]>>3
			s1 := bits.RotateLeft32(w[t-2], -17) ^ bits.RotateLeft32(w[t-2], -19) ^ w[t-2]>>10
			w[t] = s1 + w[t-7] + s0 + w[t-16]
		}
		a, b, c, d := state[0][l], state[1][l], state[2][l], state[3][l]
		e, f, g, h := state[4][l], state[5][l], state[6][l], state[7][l]
		for t := range 64 {
			t1 := h + (bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)) +
				(e&f ^ ^e&g) + roundk.K[t] + w[t]
			t2 := (bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)) +
				(a&b | a&c | b&c)
			h, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
		}
		state[0][l] += a
		state[1][l] += b
		state[2][l] += c
		state[3][l] += d
		state[4][l] += e
		state[5][l] += f
		state[6][l] += g
		state[7][l] += h
	}
}
