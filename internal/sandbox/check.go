package sandbox

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// UsernsHint names the setting of this machine that forbids unprivileged
// user namespaces, and how to allow them, or says none of the known ones
// does.
func UsernsHint() string {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	var hints []string
	if read("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		hints = append(hints, "kernel.unprivileged_userns_clone is 0: allow with sysctl -w kernel.unprivileged_userns_clone=1")
	}
	if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
		hints = append(hints, "kernel.apparmor_restrict_unprivileged_userns is 1 (Ubuntu): give bwrap an AppArmor profile with 'userns,' or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")
	}
	if read("/proc/sys/user/max_user_namespaces") == "0" {
		hints = append(hints, "user.max_user_namespaces is 0: allow with sysctl -w user.max_user_namespaces=15000")
	}
	if len(hints) == 0 {
		return "unprivileged user namespaces must be allowed (kernel.unprivileged_userns_clone=1 on Debian, kernel.apparmor_restrict_unprivileged_userns=0 or a bwrap AppArmor profile on Ubuntu; inside a container, one that permits user namespaces)"
	}
	return strings.Join(hints, "; ")
}

// Report is what Check found: what is missing, and what a sandbox of this
// machine allows.
type Report struct {
	// Problems say what keeps the sandbox from working; none means it
	// works.
	Problems []string
	// HostUID is the host user the sandboxed programs run as.
	HostUID int
	// Allows lists what a sandboxed program can and cannot do.
	Allows []string
}

// Check finds the sandbox of this machine and says what it allows, or
// what is missing.
func Check(ctx context.Context) Report {
	s, probs := find(ctx)
	if len(probs) > 0 {
		return Report{Problems: probs}
	}
	l := Limits{}
	l.defaults()
	userns := "nested user namespaces: allowed (bwrap here has no --disable-userns)"
	if s.disableUserns {
		userns = "nested user namespaces: refused (--disable-userns)"
	}
	return Report{HostUID: s.HostUID(), Allows: []string{
		fmt.Sprintf("runs as: uid %d in a user namespace of its own, host uid %d, no capability", UID, s.HostUID()),
		userns,
		"network: none, a loopback of its own (an install step shares the host's, through a proxy to the package registry only)",
		"files: /usr read-only, the package read-only, a private home and /tmp on tmpfs; nothing else of the host",
		fmt.Sprintf("memory: %d MiB for its processes' resident memory, its tmpfs folders and its memfd files together (--sandbox-memory); no address-space limit", l.Memory>>20),
		"System V IPC: refused (shmget, semget and msgget fail with EPERM, by seccomp): its objects would outlive every process, outside the memory bound",
		fmt.Sprintf("processes: %d (threads count), CPU %v per process, files up to %d MiB, home, /tmp and /dev/shm %d MiB each, root and /dev read-only", l.Procs, l.CPU, l.FileSize>>20, l.TmpSize>>20),
		"limits: set from the host before the program runs; nothing else runs inside",
		"end: every process of the sandbox is killed with its PID namespace",
	}}
}
