//go:build linux

package hugeheap

import (
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// modeFile holds the kernel's setting, as "always [madvise] never".
const modeFile = "/sys/kernel/mm/transparent_hugepage/enabled"

// arenaBytes is the span of address space the runtime reserves for the
// heap at a time on 64-bit Linux: advising from the start of the arena that
// holds the grown range takes in the heap that was there before it.
const arenaBytes = 64 << 20

// maxRoom bounds the range Prepare grows the heap by.
const maxRoom = 512 << 20

func mode() string {
	b, err := os.ReadFile(modeFile)
	if err != nil {
		return ""
	}
	return parseMode(string(b))
}

func prepare(room int64) Result {
	r := Result{Mode: mode()}
	if r.Mode != "madvise" || room <= 0 {
		return r
	}
	// The grown range is committed memory, though untouched: a room far
	// past what a run's heap holds would count against a machine that
	// commits strictly (vm.overcommit_memory=2) for nothing.
	b := make([]byte, min(room, maxRoom))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := start + uintptr(len(b))
	base := start &^ (arenaBytes - 1)
	// The range may hold holes (ENOMEM), which madvise steps over,
	// advising every mapping in it.
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, base, end-base, unix.MADV_HUGEPAGE)
	runtime.KeepAlive(b)
	if errno != 0 && errno != unix.ENOMEM {
		r.Err = errno
		return r
	}
	// Free the range now (b is dead past KeepAlive), so that the run's allocations are taken from
	// it rather than from fresh, unadvised growth.
	runtime.GC()
	r.Advised, r.Bytes = true, int64(end-base)
	return r
}

// parseMode picks the bracketed choice of the kernel's setting.
func parseMode(s string) string {
	a := strings.IndexByte(s, '[')
	b := strings.IndexByte(s, ']')
	if a < 0 || b < a {
		return ""
	}
	return s[a+1 : b]
}
