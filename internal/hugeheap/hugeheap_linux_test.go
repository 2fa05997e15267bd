//go:build linux

package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestParseMode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"always [madvise] never\n", "madvise"},
		{"[always] madvise never\n", "always"},
		{"always madvise [never]\n", "never"},
		{"always madvise never\n", ""},
		{"", ""},
	} {
		if got := parseMode(tc.in); got != tc.want {
			t.Errorf("parseMode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPrepare: in mode madvise, memory the heap hands out after Prepare
// lies in a mapping advised for huge pages (smaps' VmFlags "hg"); in any
// other mode nothing is advised.
func TestPrepare(t *testing.T) {
	r := Prepare(32 << 20)
	if again := Prepare(1 << 20); again != r {
		t.Errorf("a second Prepare gave %+v, the first %+v", again, r)
	}
	if r.Mode != "madvise" {
		if r.Advised {
			t.Errorf("mode %q: advised %+v, want nothing", r.Mode, r)
		}
		t.Logf("kernel mode %q: the heap is left alone", r.Mode)
		return
	}
	if !r.Advised || r.Err != nil || r.Bytes < 32<<20 {
		t.Fatalf("mode madvise: %+v, want a range of at least 32 MiB advised", r)
	}
	b := make([]byte, 8<<20)
	b[0] = 1
	flags, err := vmFlags(uintptr(unsafe.Pointer(&b[0])))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the heap's mapping has VmFlags %q, without hg", flags)
	}
}

// vmFlags is the VmFlags line of the mapping of /proc/self/smaps that
// holds addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if rng, _, ok := strings.Cut(line, " "); ok && strings.Contains(rng, "-") && !strings.HasSuffix(rng, ":") {
			lo, hi, _ := strings.Cut(rng, "-")
			a, errA := strconv.ParseUint(lo, 16, 64)
			b, errB := strconv.ParseUint(hi, 16, 64)
			in = errA == nil && errB == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping of /proc/self/smaps holds %#x", addr)
}
