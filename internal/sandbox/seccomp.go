package sandbox

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/net/bpf"
)

// The sandbox's memory bound (Limits.Memory) counts what its processes map
// and what its memory-backed folders and memfd files hold (watch.go). A
// System V shared memory segment, semaphore set or message queue is none
// of these: it lives in the sandbox's IPC namespace, detached from every
// process, until the namespace ends, and the kernel's defaults let it grow
// far past any bound of ours. No process outside the sandbox can read how
// much the namespace holds without privileges, so the sandbox refuses to
// make them: shmget, semget and msgget (and the old ipc multiplexer of
// 32-bit x86) fail with EPERM. Programs that use System V IPC are rare
// among servers; POSIX shared memory (/dev/shm) is counted and allowed.

// Audit architectures (linux/audit.h) whose System V IPC calls the filter
// knows; a call of another architecture passes.
const (
	auditArchX86_64  = 0xC000003E
	auditArchI386    = 0x40000003
	auditArchAArch64 = 0xC00000B7
	auditArchARM     = 0x40000028
	// x32Bit marks an x32 call on x86_64 (__X32_SYSCALL_BIT).
	x32Bit = 0x40000000
)

// Seccomp return values (linux/seccomp.h).
const (
	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000
	errnoEPERM      = 1
)

// sysvCalls are each architecture's calls that make (or look up) a
// System V IPC object.
var sysvCalls = []struct {
	arch  uint32
	calls []uint32
	mask  uint32 // cleared from the call number before it is compared
}{
	{auditArchX86_64, []uint32{29, 64, 68}, x32Bit},  // shmget, semget, msgget (x32 alike)
	{auditArchI386, []uint32{117, 395, 393, 399}, 0}, // ipc, shmget, semget, msgget
	{auditArchAArch64, []uint32{194, 190, 186}, 0},   // shmget, semget, msgget
	{auditArchARM, []uint32{307, 299, 303}, 0},       // shmget, semget, msgget
}

// sysvFilter is the sandbox's seccomp program: System V IPC objects
// refused, every other call allowed.
func sysvFilter() []bpf.Instruction {
	// Offsets of struct seccomp_data.
	const nrOff, archOff = 0, 4
	prog := []bpf.Instruction{bpf.LoadAbsolute{Off: archOff, Size: 4}}
	// One test of the architecture each, jumping to its block; the
	// blocks follow in order, each ending in allow; deny is last.
	blockLen := func(i int) int {
		n := 1 + len(sysvCalls[i].calls) + 1 // load, tests, allow
		if sysvCalls[i].mask != 0 {
			n++
		}
		return n
	}
	for i, a := range sysvCalls {
		// From the test after this one: the other tests, an allow,
		// then the blocks before a's.
		skip := len(sysvCalls) - i - 1 + 1
		for j := range i {
			skip += blockLen(j)
		}
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.arch, SkipTrue: uint8(skip)})
	}
	prog = append(prog, bpf.RetConstant{Val: seccompRetAllow})
	total := 0
	for i := range sysvCalls {
		total += blockLen(i)
	}
	at := 0 // instructions of the blocks emitted so far
	for _, a := range sysvCalls {
		prog = append(prog, bpf.LoadAbsolute{Off: nrOff, Size: 4})
		at++
		if a.mask != 0 {
			prog = append(prog, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: ^a.mask})
			at++
		}
		for _, nr := range a.calls {
			at++
			// To deny, just past every block.
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipTrue: uint8(total - at)})
		}
		prog = append(prog, bpf.RetConstant{Val: seccompRetAllow})
		at++
	}
	return append(prog, bpf.RetConstant{Val: seccompRetErrno | errnoEPERM})
}

// seccompProgram is sysvFilter compiled for bwrap's --seccomp: struct
// sock_filter entries in the machine's byte order.
func seccompProgram() ([]byte, error) {
	raw, err := bpf.Assemble(sysvFilter())
	if err != nil {
		return nil, fmt.Errorf("sandbox: the seccomp filter: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.NativeEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.NativeEndian.AppendUint32(out, r.K)
	}
	return out, nil
}
