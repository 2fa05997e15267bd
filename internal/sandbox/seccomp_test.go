package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// TestSysvFilter runs the seccomp program in x/net/bpf's machine on each
// architecture's calls: the System V IPC objects' makers are refused with
// EPERM, their neighbours and every other architecture's calls pass.
func TestSysvFilter(t *testing.T) {
	vm, err := bpf.NewVM(sysvFilter())
	if err != nil {
		t.Fatal(err)
	}
	const deny, allow = seccompRetErrno | errnoEPERM, seccompRetAllow
	for _, c := range []struct {
		name     string
		arch, nr uint32
		want     int
	}{
		{"x86_64 shmget", auditArchX86_64, 29, deny},
		{"x86_64 semget", auditArchX86_64, 64, deny},
		{"x86_64 msgget", auditArchX86_64, 68, deny},
		{"x32 shmget", auditArchX86_64, x32Bit | 29, deny},
		{"x32 msgget", auditArchX86_64, x32Bit | 68, deny},
		{"x86_64 shmat", auditArchX86_64, 30, allow},
		{"x86_64 read", auditArchX86_64, 0, allow},
		{"x86_64 memfd_create", auditArchX86_64, 319, allow},
		{"x86_64 194 (aarch64's shmget)", auditArchX86_64, 194, allow},
		{"i386 ipc", auditArchI386, 117, deny},
		{"i386 shmget", auditArchI386, 395, deny},
		{"i386 semget", auditArchI386, 393, deny},
		{"i386 msgget", auditArchI386, 399, deny},
		{"i386 29", auditArchI386, 29, allow},
		{"aarch64 shmget", auditArchAArch64, 194, deny},
		{"aarch64 semget", auditArchAArch64, 190, deny},
		{"aarch64 msgget", auditArchAArch64, 186, deny},
		{"aarch64 shmat", auditArchAArch64, 196, allow},
		{"aarch64 29", auditArchAArch64, 29, allow},
		{"arm shmget", auditArchARM, 307, deny},
		{"arm semget", auditArchARM, 299, deny},
		{"arm msgget", auditArchARM, 303, deny},
		{"arm 29", auditArchARM, 29, allow},
		{"another architecture", 0xC0000016, 29, allow},
	} {
		// struct seccomp_data; the machine loads big-endian words.
		data := make([]byte, 64)
		binary.BigEndian.PutUint32(data[0:], c.nr)
		binary.BigEndian.PutUint32(data[4:], c.arch)
		got, err := vm.Run(data)
		if err != nil || got != c.want {
			t.Errorf("%s: %#x, %v; want %#x", c.name, got, err, c.want)
		}
	}
	if b, err := seccompProgram(); err != nil || len(b) != 8*len(sysvFilter()) {
		t.Errorf("compiled program: %d bytes, %v", len(b), err)
	}
}
