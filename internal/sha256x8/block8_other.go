//go:build !amd64 || purego

package sha256x8

// This file serves every architecture but amd64, and amd64 under the
// purego tag (no assembly, as crypto's own purego tag).

// canMulti is true: block8 is the portable Go code here, so the forced
// eight-lane path of the tests still runs (slowly) on every architecture.
const canMulti = true

// multi is false: without the AVX2 code, crypto/sha256 is faster.
const multi = false

// block8 compresses one 64-byte block for each of the eight lanes.
func block8(state *[8][8]uint32, blocks *[8]*byte) { block8Generic(state, blocks) }

// canAVX512 is true and useAVX512 false: block8AVX512 is the portable Go
// code too, selected only by the tests.
const canAVX512 = true

// useAVX512 selects block8AVX512 over block8; both are the same here.
var useAVX512 = false

// block8AVX512 compresses one 64-byte block for each of the eight lanes.
func block8AVX512(state *[8][8]uint32, blocks *[8]*byte) { block8Generic(state, blocks) }
