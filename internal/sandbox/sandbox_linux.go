package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

const isLinux = true

// setProcAttr puts bwrap in a process group of its own, so that the kill
// reaches bwrap's helper too, and kills it if the crawl dies: bwrap's init
// in the PID namespace dies with it (--die-with-parent), and the kernel
// then kills every process of the namespace, however far it wandered from
// its parent.
func setProcAttr(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killTree kills bwrap's children, the init of the sandbox's PID
// namespace: the kernel then kills every process of the namespace. Before
// the namespace exists, or after, bwrap's process group is killed
// instead.
func killTree(pid int) error {
	killed := false
	for _, child := range children(pid) {
		if syscall.Kill(child, syscall.SIGKILL) == nil {
			killed = true
		}
	}
	if killed {
		return nil
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// children are the child processes of pid, of all its threads.
func children(pid int) []int {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, _ := os.ReadDir(dir)
	var out []int
	for _, t := range tasks {
		b, _ := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// descendants are the processes below pid, breadth first: its children
// come first.
func descendants(pid int) []int {
	var out []int
	queue := children(pid)
	seen := map[int]bool{}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		queue = append(queue, children(p)...)
	}
	return out
}

var pageSize = int64(os.Getpagesize())

// rss is the resident memory of process pid, bytes (0 once it is gone).
func rss(pid int) int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "statm"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * pageSize
}

// memfdBytes is what the memfd files that pids hold open take, each file
// once: a memfd (memfd_create) is memory no process's resident set shows
// until it is mapped, and no folder of the sandbox holds. Each is capped by
// the file size limit alone, and a process may make many. A mapped memfd
// counts in the resident set as well, so a file may count twice: the
// bound errs on the side of the host.
func memfdBytes(pids []int) int64 {
	var sum int64
	seen := map[[2]uint64]bool{}
	for _, p := range pids {
		dir := "/proc/" + strconv.Itoa(p) + "/fd/"
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			target, err := os.Readlink(dir + fd.Name())
			if err != nil || !strings.HasPrefix(target, "/memfd:") {
				continue
			}
			var st unix.Stat_t
			if unix.Stat(dir+fd.Name(), &st) != nil {
				continue
			}
			key := [2]uint64{st.Dev, st.Ino}
			if !seen[key] {
				seen[key] = true
				sum += st.Blocks * 512
			}
		}
	}
	return sum
}

// initProc is the sandbox's PID namespace init, held by a pidfd so that
// its end is seen even once its id is reused.
type initProc struct{ fd int }

func openInit(pid int) *initProc {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil
	}
	return &initProc{fd: fd}
}

// wait returns once the init has exited: its exit completes only after
// every other process of its namespace has ended.
func (p *initProc) wait() {
	if p == nil {
		return
	}
	defer unix.Close(p.fd)
	for {
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, -1)
		if err == nil && n > 0 || err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
