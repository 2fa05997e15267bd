//go:build amd64 && !purego

package sha256x8

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEnabled checks the reading of GODEBUG's cpu.* settings.
func TestEnabled(t *testing.T) {
	cases := []struct {
		godebug, name string
		want          bool
	}{
		{"", "sha", true},
		{"cpu.sha=off", "sha", false},
		{"madvdontneed=1,cpu.sha=off", "sha", false},
		{"cpu.all=off", "sha", false},
		{"cpu.all=off", "avx2", false},
		{"cpu.sha=off,cpu.sha=on", "sha", true},
		{"cpu.all=off,cpu.sha=on", "sha", true},
		{"cpu.sha=on,cpu.all=off", "sha", false},
		{"cpu.avx2=off", "sha", true},
		{"cpu.avx2=off", "avx2", false},
		{"cpu.shax=off", "sha", true},
		{"cpu.avx512f=off", "avx512", true},
	}
	for _, c := range cases {
		if got := enabled(c.godebug, c.name); got != c.want {
			t.Errorf("enabled(%q, %q) = %v, want %v", c.godebug, c.name, got, c.want)
		}
	}
}

// TestDetect compares what klauspost/cpuid reports, with the GODEBUG
// settings applied, with the flags Linux reports.
func TestDetect(t *testing.T) {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo to compare with: %v", err)
	}
	var flags []string
	for line := range strings.Lines(string(info)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	has := func(f string) bool { return slices.Contains(flags, f) }
	want := features{
		avx2:   has("avx") && has("avx2"),
		avx512: has("avx512f") && has("avx512vl"),
		sha:    has("sha_ni"),
	}
	if got := detect(""); got != want {
		t.Errorf("detect(\"\") = %+v, /proc/cpuinfo says %+v", got, want)
	}
	off := detect("cpu.sha=off,cpu.avx512f=off")
	if off.sha || off.avx512 || off.avx2 != want.avx2 {
		t.Errorf("detect with cpu.sha=off,cpu.avx512f=off = %+v", off)
	}
	if all := detect("cpu.all=off"); all != (features{}) {
		t.Errorf("detect with cpu.all=off = %+v, want nothing", all)
	}
}

// TestMultiFollowsGODEBUG runs the test binary again with and without
// GODEBUG's cpu.sha, cpu.avx2 and cpu.avx512f turned off and checks what
// Multi reports in that process.
func TestMultiFollowsGODEBUG(t *testing.T) {
	if os.Getenv("SHA256X8_PRINT_MULTI") == "1" {
		fmt.Print(Multi())
		os.Exit(0)
	}
	hw := detect("")
	for _, godebug := range []string{"", "cpu.sha=off", "cpu.avx2=off", "cpu.avx512f=off"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMultiFollowsGODEBUG$")
		cmd.Env = append(os.Environ(), "SHA256X8_PRINT_MULTI=1", "GODEBUG="+godebug)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GODEBUG=%s: %v", godebug, err)
		}
		want := hw.avx2 && (!hw.sha || hw.avx512)
		switch godebug {
		case "cpu.sha=off":
			want = hw.avx2
		case "cpu.avx2=off":
			want = false
		case "cpu.avx512f=off":
			want = hw.avx2 && !hw.sha
		}
		if got := string(out); got != strconv.FormatBool(want) {
			t.Errorf("GODEBUG=%s: Multi() = %s, want %v", godebug, got, want)
		}
	}
}
