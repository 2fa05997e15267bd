//go:build amd64

package sha256x8

import (
	"os"
	"strings"

	"golang.org/x/sys/cpu"
)

// block8 compresses one 64-byte block for each of the eight lanes:
// blocks[l] points at lane l's block and state[w][l] is word w of lane
// l's chaining value. It is in block8_amd64.s, written by ./gen.
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

// cpuid executes the CPUID instruction; it is in cpuid_amd64.s.
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

// canMulti reports whether block8 can run here.
var canMulti = cpu.X86.HasAVX2

// canAVX512 reports whether block8AVX512 can run here.
var canAVX512 = canMulti && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// useAVX512 selects block8AVX512 over block8. Tests and benchmarks clear
// it to exercise block8 on processors that have AVX-512VL.
var useAVX512 = canAVX512

// multi reports whether block8 is the faster way here: crypto/sha256's
// SHA-NI code beats eight AVX2 lanes, its AVX2 code does not.
var multi = canMulti && !shaNIInUse(hasSHANI(), os.Getenv("GODEBUG"))

// hasSHANI reports whether the processor has the SHA extensions
// (CPUID.(EAX=7,ECX=0):EBX bit 29). golang.org/x/sys/cpu does not report them.
func hasSHANI() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, ebx, _, _ := cpuid(7, 0)
	return ebx&(1<<29) != 0
}

// shaNIInUse reports whether crypto/sha256 uses SHA-NI, given whether the
// processor has it and the GODEBUG setting: the runtime honours
// cpu.sha=off and cpu.all=off there, the last setting winning.
func shaNIInUse(has bool, godebug string) bool {
	on := has
	for _, f := range strings.Split(godebug, ",") {
		switch strings.TrimSpace(f) {
		case "cpu.sha=off", "cpu.all=off":
			on = false
		case "cpu.sha=on", "cpu.all=on":
			on = has
		}
	}
	return on
}
