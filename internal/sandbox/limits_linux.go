package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// setLimits sets, from the host, the resource limits of process pid, the
// sandbox's first process: soft and hard alike, so that nothing inside
// raises them. The sandbox runs as the host user, who may (prlimit(2)).
// Root, whose sandbox runs as RootUser, sets them as that user with the
// host's prlimit(1): root may lack CAP_SYS_RESOURCE (in a container).
func (s *Sandbox) setLimits(pid int, l Limits) error {
	type limit struct {
		res int
		v   uint64
	}
	set := []limit{
		{unix.RLIMIT_CPU, uint64(max(int64(l.CPU/time.Second), 1))},
		{unix.RLIMIT_NPROC, uint64(l.Procs)},
		{unix.RLIMIT_FSIZE, uint64(l.FileSize)},
		{unix.RLIMIT_CORE, 0},
	}
	if l.ProcessMemory > 0 {
		set = append(set, limit{unix.RLIMIT_AS, uint64(l.ProcessMemory)})
	}
	if s.hostUID == os.Getuid() {
		for _, r := range set {
			if err := unix.Prlimit(pid, r.res, &unix.Rlimit{Cur: r.v, Max: r.v}, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if err := unix.Kill(pid, 0); err != nil {
		return err // ESRCH: bwrap failed in its setup
	}
	args := []string{"--pid", strconv.Itoa(pid)}
	for _, r := range set {
		v := strconv.FormatUint(r.v, 10)
		args = append(args, "--"+rlimitNames[r.res]+"="+v+":"+v)
	}
	cmd := exec.Command(s.setpriv, append(s.dropArgs(s.prlimit), args...)...)
	cmd.Env = []string{}
	if out, err := cmd.CombinedOutput(); err != nil {
		if unix.Kill(pid, 0) != nil {
			return unix.ESRCH
		}
		return fmt.Errorf("%s: %v: %s", s.prlimit, err, bytes.TrimSpace(out))
	}
	return nil
}

// rlimitNames are prlimit(1)'s names of the limits setLimits sets.
var rlimitNames = map[int]string{unix.RLIMIT_CPU: "cpu", unix.RLIMIT_NPROC: "nproc",
	unix.RLIMIT_FSIZE: "fsize", unix.RLIMIT_CORE: "core", unix.RLIMIT_AS: "as"}

// openStores opens, from the host, the memory-backed folders of the
// sandbox whose first process is pid, through that process's root: each
// path is resolved inside that root and never through a link, so a
// program cannot point the count at another folder. The descriptors
// (O_PATH) are held for the watch until Wait.
func openStores(pid int, ss []store) ([]int, error) {
	root, err := unix.Open(filepath.Join("/proc", strconv.Itoa(pid), "root"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(root)
	var fds []int
	for _, s := range ss {
		fd, err := unix.Openat2(root, strings.TrimPrefix(s.path, "/"), &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err == nil {
			var st unix.Statfs_t
			if err = unix.Fstatfs(fd, &st); err == nil && st.Type != unix.TMPFS_MAGIC {
				err = errors.New(s.path + " is not a tmpfs")
			}
			if err != nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return nil, err
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// storeBytes is the memory the folders of fds hold.
func storeBytes(fds []int) int64 {
	var sum int64
	for _, fd := range fds {
		var st unix.Statfs_t
		if unix.Fstatfs(fd, &st) == nil {
			sum += int64(st.Blocks-st.Bfree) * st.Bsize
		}
	}
	return sum
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
