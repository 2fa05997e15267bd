package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// setProcAttr puts bwrap in a process group of its own, so that the kill
// reaches bwrap's helper too, and kills it if the crawl dies: bwrap's init
// in the PID namespace dies with it (--die-with-parent), and the kernel
// then kills every process of the namespace, however far it wandered from
// its parent.
func setProcAttr(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killTree kills the init of the sandbox's PID namespace, bwrap's child:
// the kernel then kills every process of the namespace, and the init's
// exit (so bwrap's, so Wait) completes only once they are all gone. Before
// the namespace exists, or after, bwrap's process group is killed instead.
func killTree(c *exec.Cmd) error {
	if c.Process == nil {
		return nil
	}
	pid := strconv.Itoa(c.Process.Pid)
	b, _ := os.ReadFile(filepath.Join("/proc", pid, "task", pid, "children"))
	killed := false
	for _, f := range strings.Fields(string(b)) {
		if child, err := strconv.Atoi(f); err == nil && syscall.Kill(child, syscall.SIGKILL) == nil {
			killed = true
		}
	}
	if killed {
		return nil
	}
	err := syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

func killPID(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
