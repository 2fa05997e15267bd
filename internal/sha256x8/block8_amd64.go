//go:build amd64 && !purego

package sha256x8

import (
	"os"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// block8 compresses one 64-byte block for each of the eight lanes:
// blocks[l] points at lane l's block and state[w][l] is word w of lane
// l's chaining value. It is in block8_amd64.s, which ./asm generates
// with avo.
//
//go:noescape
func block8(state *[8][8]uint32, blocks *[8]*byte)

// block8AVX512 is block8 using AVX-512VL's rotate and three-input logic
// instructions on the same YMM registers: about half the instructions per
// round. The Xeons without SHA-NI that this package is for (Skylake-SP,
// Cascade Lake) have AVX-512VL.
//
//go:noescape
func block8AVX512(state *[8][8]uint32, blocks *[8]*byte)

// features is what this package needs to know of the processor.
type features struct {
	avx2   bool // AVX and AVX2, with YMM state saved by the OS
	avx512 bool // AVX-512F and AVX-512VL, with ZMM and mask state saved by the OS
	sha    bool // SHA-NI, which crypto/sha256 then uses
}

var feat = detect(os.Getenv("GODEBUG"))

// canMulti reports whether block8 can run here.
var canMulti = feat.avx2

// canAVX512 reports whether block8AVX512 can run here.
var canAVX512 = feat.avx2 && feat.avx512

// useAVX512 selects block8AVX512 over block8. Tests and benchmarks clear
// it to exercise block8 on processors that have AVX-512VL.
var useAVX512 = canAVX512

// multi reports whether the eight lanes are the faster way here: with
// AVX-512VL they beat crypto/sha256 even where it has SHA-NI (2.0 against
// 1.2–1.5 GB/s on an AMD EPYC, BenchmarkSum), with AVX2 alone they beat
// its AVX2 code (1.3 against 0.43 GB/s) but not its SHA-NI code.
var multi = canMulti && (!feat.sha || canAVX512)

// detect reads the processor's features through klauspost/cpuid, which
// checks with XGETBV that the operating system saves the YMM, ZMM and
// opmask registers, then applies godebug's cpu.* settings as the runtime
// does for crypto/sha256, so GODEBUG=cpu.sha=off makes Sum choose as on a
// processor without SHA-NI. (golang.org/x/sys/cpu does not report SHA-NI,
// and prints a warning for cpu.sha, which it does not know.)
func detect(godebug string) features {
	c := &cpuid.CPU
	return features{
		avx2: c.Supports(cpuid.AVX, cpuid.AVX2) &&
			enabled(godebug, "avx") && enabled(godebug, "avx2"),
		avx512: c.Supports(cpuid.AVX512F, cpuid.AVX512VL) &&
			enabled(godebug, "avx512f") && enabled(godebug, "avx512vl"),
		sha: c.Supports(cpuid.SHA) && enabled(godebug, "sha"),
	}
}

// enabled reports whether the GODEBUG value godebug leaves the runtime's
// CPU feature option name enabled: cpu.<name>=off and cpu.all=off disable
// it, =on enables it again, and the last setting wins.
func enabled(godebug, name string) bool {
	on := true
	for _, f := range strings.Split(godebug, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		if k != "cpu."+name && k != "cpu.all" {
			continue
		}
		switch v {
		case "off":
			on = false
		case "on":
			on = true
		}
	}
	return on
}
