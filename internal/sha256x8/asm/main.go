// Command asm writes block8_amd64.s, the compression functions of package
// sha256x8: one 64-byte block of each of eight independent SHA-256
// messages, one message per 32-bit lane of the YMM registers, with AVX2
// (block8) or with AVX-512VL's rotate and three-input logic (block8AVX512).
//
// The assembly is generated with avo rather than written because its 64
// rounds are fully unrolled and the working variables a..h are renamed
// from round to round instead of moved: after a round the new e lives in
// d's register and the new a in h's, so the generator only rotates its
// table of registers. The registers are avo's physical ones, chosen here,
// not allocated: the renaming is the point of the schedule.
//
// Usage (go generate ./internal/sha256x8 runs it):
//
//	go -C asm run . -out ../block8_amd64.s
//
// Without -out it writes to standard output. Operand order is Go's:
// sources first, destination last, so Intel's "vpandn dst, s1, s2"
// (dst = ^s1 & s2) is VPANDN(s2, s1, dst).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	"github.com/mmcloughlin/avo/reg"

	"github.com/atlas-reproduce/atlas-reproduce/internal/sha256x8/internal/roundk"
)

func main() {
	log.SetFlags(0)
	// A flag set of its own: importing avo's build package defines its
	// flags, -out among them, on flag.CommandLine.
	fs := flag.NewFlagSet("asm", flag.ExitOnError)
	out := fs.String("out", "", "file to write (standard output without it)")
	fs.Parse(os.Args[1:]) // ExitOnError: it returns no error
	src, err := generate()
	if err != nil {
		log.Fatal(err)
	}
	if *out == "" {
		if _, err := os.Stdout.Write(src); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := writeFile(*out, src); err != nil {
		log.Fatal(err)
	}
}

// writeFile writes src to a temporary name beside path and renames it into
// place, so a failed run never leaves half an assembly file.
func writeFile(path string, src []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".block8-*.s")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(src); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// generate returns the whole assembly file. Its header names the go
// generate command rather than this process's arguments, so the output
// does not depend on where it is written (the package's test compares it
// with the committed file).
func generate() ([]byte, error) {
	g := &gen{Context: build.NewContext()}
	g.ConstraintExpr("amd64,!purego")

	// Round constants, each replicated into the eight lanes so that a round
	// adds them with one memory operand.
	g.k = g.StaticGlobal("k256x8")
	g.DataAttributes(attr.RODATA | attr.NOPTR)
	for t, c := range roundk.K {
		for q := range 4 {
			g.AddDatum(t*32+q*8, operand.U64(uint64(c)<<32|uint64(c)))
		}
	}
	// VPSHUFB control that reverses the bytes of every 32-bit word: the
	// message is big-endian, the lanes little-endian. VPSHUFB indexes within
	// each 128-bit half, so both halves hold the same pattern.
	g.bswap = g.StaticGlobal("bswap32")
	g.DataAttributes(attr.RODATA | attr.NOPTR)
	for q := range 4 {
		v := uint64(0x0405060700010203)
		if q%2 == 1 {
			v = 0x0c0d0e0f08090a0b
		}
		g.AddDatum(q*8, operand.U64(v))
	}

	g.function(false)
	g.function(true)

	f, err := g.Result()
	if err != nil {
		return nil, err
	}
	if err := pass.Compile.Execute(f); err != nil {
		return nil, err
	}
	cfg := printer.Config{Argv: []string{"go", "generate", "./internal/sha256x8"}, Pkg: "sha256x8"}
	return printer.NewGoAsm(cfg).Print(f)
}

// gen is the avo build context with the two data symbols the functions read.
type gen struct {
	*build.Context
	k     operand.Mem // k256x8: the round constants, eight lanes each
	bswap operand.Mem // bswap32: the VPSHUFB control of the byte swap
}

// Registers: the state and block pointers, the block being loaded, the
// 32-byte aligned schedule ring.
var (
	statePtr = reg.RAX
	blocks   = reg.RBX
	block    = reg.RCX
	ringBase = reg.R8
)

// ring returns the operand of message word t in the schedule ring, which
// ringBase points at (the frame rounded up to 32 bytes, so no access splits
// a cache line); the ring keeps only the last sixteen words, so W[t]
// overwrites W[t-16].
func ring(t int) operand.Mem { return operand.Mem{Base: ringBase, Disp: (t % 16) * 32} }

// Temporaries Y8..Y13; Y14 and Y15 carry a ^ b from round to round for
// Maj. The working variables a..h start in Y0..Y7.
var t0, t1, t2, t3, t4, t5 = reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13

// maj[t%2] holds b ^ c at the start of round t.
var maj = [2]reg.VecPhysical{reg.Y14, reg.Y15}

// vars are a..h at the start of the first round.
var vars = []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7}

// function writes block8 or, with avx512, block8AVX512: the same
// algorithm where AVX-512VL (on the YMM registers) supplies a vector
// rotate (VPRORD) and three-input logic (VPTERNLOGD), which halve the
// instructions of a round.
func (g *gen) function(avx512 bool) {
	name, needs := "block8", "AVX2"
	if avx512 {
		name, needs = "block8AVX512", "AVX2, AVX512F and AVX512VL"
	}
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.SignatureExpr("func(state *[8][8]uint32, blocks *[8]*byte)")
	g.Comment(
		fmt.Sprintf("It needs %s. state[w][l] is word w of the chaining value of lane l;", needs),
		"blocks[l] points at the 64 bytes lane l compresses. The frame holds the",
		"message schedule ring: sixteen 32-byte rows, row t%16 holding W[t] of all",
		"eight lanes, 32-byte aligned at R8.",
	)
	// 31 bytes more than the ring's 512 leave room to align it to 32.
	frame := g.AllocLocal(544)
	g.Load(g.Param("state"), statePtr)
	g.Load(g.Param("blocks"), blocks)
	g.LEAQ(frame.Offset(31), ringBase)
	g.ANDQ(operand.I32(^31), ringBase)

	// Load, byte-swap and transpose the 16 message words of the 8 lanes,
	// 32 bytes (eight words) at a time.
	for half := range 2 {
		g.Commentf("message words %d to %d of the eight lanes", half*8, half*8+7)
		rows := []reg.VecPhysical{t0, t1, t2, t3, t4, t5, reg.Y14, reg.Y15}
		for l := range 8 {
			g.MOVQ(operand.Mem{Base: blocks, Disp: l * 8}, block)
			g.VMOVDQU(operand.Mem{Base: block, Disp: half * 32}, rows[l])
			g.VPSHUFB(g.bswap, rows[l], rows[l])
		}
		cols := vars
		g.transpose(rows, cols)
		for w, r := range cols {
			g.VMOVDQU(r, ring(half*8+w))
		}
	}

	// Working variables a..h.
	g.Comment("the chaining value: a..h")
	v := vars
	for w := range 8 {
		g.VMOVDQU(operand.Mem{Base: statePtr, Disp: w * 32}, v[w])
	}
	// Without VPTERNLOGD, Maj is computed as b ^ ((a ^ b) & (b ^ c)), and
	// a ^ b of one round is b ^ c of the next, so each round hands its
	// a ^ b on in one of two alternating registers; round 0 starts from
	// b ^ c.
	if !avx512 {
		g.VPXOR(v[2], v[1], maj[0])
	}

	for t := range 64 {
		g.round(t, v, avx512)
		// Rename: new a is in h's register, new e already in d's.
		v = []reg.VecPhysical{v[7], v[0], v[1], v[2], v[3], v[4], v[5], v[6]}
	}

	// 64 renamings are eight full turns: a..h are back in Y0..Y7.
	g.Comment("add the compressed block to the chaining value")
	for w := range 8 {
		g.VPADDD(operand.Mem{Base: statePtr, Disp: w * 32}, v[w], v[w])
		g.VMOVDQU(v[w], operand.Mem{Base: statePtr, Disp: w * 32})
	}
	g.VZEROUPPER()
	g.RET()
}

// transpose turns rows (row l = eight consecutive words of lane l) into
// columns: afterwards tmp[w] holds word w of lanes 0..7. The rows are
// clobbered.
func (g *gen) transpose(r, tmp []reg.VecPhysical) {
	// Interleave dwords of lane pairs: within each 128-bit half,
	// lo(r0,r1) = r0[0] r1[0] r0[1] r1[1], hi = r0[2] r1[2] r0[3] r1[3].
	for p := range 4 {
		g.VPUNPCKLDQ(r[2*p+1], r[2*p], tmp[2*p])
		g.VPUNPCKHDQ(r[2*p+1], r[2*p], tmp[2*p+1])
	}
	// Interleave qwords of pair pairs: lanes 0..3 (and 4..7) of one word
	// per 128-bit half; the low half holds word w, the high half word w+4.
	for q := range 2 {
		a, b := tmp[4*q], tmp[4*q+2]   // lo(r0,r1), lo(r2,r3)
		c, d := tmp[4*q+1], tmp[4*q+3] // hi(r0,r1), hi(r2,r3)
		g.VPUNPCKLQDQ(b, a, r[4*q])    // word 0 | 4
		g.VPUNPCKHQDQ(b, a, r[4*q+1])  // word 1 | 5
		g.VPUNPCKLQDQ(d, c, r[4*q+2])  // word 2 | 6
		g.VPUNPCKHQDQ(d, c, r[4*q+3])  // word 3 | 7
	}
	// Join lanes 0..3 (r[0..3]) with lanes 4..7 (r[4..7]).
	// Intel vperm2i128 dst, s1, s2, imm: 0x20 = s1.low:s2.low, 0x31 = s1.high:s2.high.
	for w := range 4 {
		g.VPERM2I128(operand.U8(0x20), r[4+w], r[w], tmp[w])
		g.VPERM2I128(operand.U8(0x31), r[4+w], r[w], tmp[4+w])
	}
}

// sigma writes dst = rotr(x, rots[0]) ^ rotr(x, rots[1]) ^ rotr(x, rots[2]),
// or with shr, ... ^ x>>rots[2] for the message schedule's σ0 and σ1. AVX2
// has no vector rotate: each rotation is two shifts. The xors form a tree
// (depth 4 from x, not 6) because Σ1(e) is on the critical path from one
// round's e to the next. s1 and s2 are scratch.
func (g *gen) sigma(x, dst, s1, s2 reg.VecPhysical, rots [3]uint8, shr, avx512 bool) {
	if avx512 {
		g.VPRORD(operand.U8(rots[0]), x, dst)
		g.VPRORD(operand.U8(rots[1]), x, s1)
		if shr {
			g.VPSRLD(operand.U8(rots[2]), x, s2)
		} else {
			g.VPRORD(operand.U8(rots[2]), x, s2)
		}
		// 0x96: dst ^ s1 ^ s2.
		g.VPTERNLOGD(operand.U8(0x96), s2, s1, dst)
		return
	}
	g.VPSRLD(operand.U8(rots[0]), x, dst)
	g.VPSLLD(operand.U8(32-rots[0]), x, s1)
	g.VPXOR(s1, dst, dst)
	g.VPSRLD(operand.U8(rots[1]), x, s1)
	g.VPSLLD(operand.U8(32-rots[1]), x, s2)
	g.VPXOR(s2, s1, s1)
	g.VPXOR(s1, dst, dst)
	g.VPSRLD(operand.U8(rots[2]), x, s1)
	if !shr {
		g.VPSLLD(operand.U8(32-rots[2]), x, s2)
		g.VPXOR(s2, s1, s1)
	}
	g.VPXOR(s1, dst, dst)
}

// round writes round t with working variables v = a..h. It leaves the new
// e in d's register and the new a in h's.
func (g *gen) round(t int, v []reg.VecPhysical, avx512 bool) {
	a, b, c, d, e, f, gg, h := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	g.Commentf("round %d", t)
	w := ring(t)
	if t >= 16 {
		// W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16]; the ring
		// slot of W[t] still holds W[t-16].
		g.VMOVDQU(ring(t-15), t0)
		g.sigma(t0, t1, t2, t3, [3]uint8{7, 18, 3}, true, avx512)
		g.VMOVDQU(ring(t-2), t4)
		g.sigma(t4, t5, t2, t3, [3]uint8{17, 19, 10}, true, avx512)
		g.VPADDD(w, t1, t1)
		g.VPADDD(ring(t-7), t1, t1)
		g.VPADDD(t5, t1, t1)
		g.VMOVDQU(t1, w)
		g.VPADDD(t1, h, h)
	} else {
		g.VPADDD(w, h, h)
	}
	// h += K[t]
	g.VPADDD(g.k.Offset(t*32), h, h)
	// h += Ch(e, f, g) = ((f ^ g) & e) ^ g
	if avx512 {
		// VPTERNLOGD's first input is its destination; 0xca: e ? f : g.
		g.VMOVDQA32(e, t0)
		g.VPTERNLOGD(operand.U8(0xca), gg, f, t0)
	} else {
		g.VPXOR(gg, f, t0)
		g.VPAND(e, t0, t0)
		g.VPXOR(gg, t0, t0)
	}
	g.VPADDD(t0, h, h)
	// h += Σ1(e); h is now T1.
	g.sigma(e, t1, t2, t3, [3]uint8{6, 11, 25}, false, avx512)
	g.VPADDD(t1, h, h)
	// new e = d + T1
	g.VPADDD(h, d, d)
	// new a = T1 + Σ0(a) + Maj(a, b, c), Maj = b ^ ((a ^ b) & (b ^ c))
	g.sigma(a, t0, t4, t5, [3]uint8{2, 13, 22}, false, avx512)
	g.VPADDD(t0, h, h)
	if avx512 {
		// 0xe8: the majority of a, b, c.
		g.VMOVDQA32(a, t2)
		g.VPTERNLOGD(operand.U8(0xe8), c, b, t2)
		g.VPADDD(t2, h, h)
		return
	}
	x, bc := maj[(t+1)%2], maj[t%2]
	g.VPXOR(b, a, x)
	g.VPAND(bc, x, t2)
	g.VPXOR(b, t2, t2)
	g.VPADDD(t2, h, h)
}
