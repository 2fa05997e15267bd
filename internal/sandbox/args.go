package sandbox

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// envName is a variable name env(1) and every shell read as one.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// store is a memory-backed folder of the sandbox: its bytes count in the
// sandbox's memory bound.
type store struct {
	path string
	size int64
}

// stores are the sandbox's memory-backed folders, in mount order: /tmp,
// /dev/shm, the home and the spec's own. Nothing else of the sandbox is
// writable memory: its root and /dev are read-only.
func stores(spec Spec) []store {
	out := []store{{"/tmp", spec.Limits.TmpSize}, {"/dev/shm", spec.Limits.TmpSize}, {Home, spec.Limits.TmpSize}}
	for _, t := range spec.Tmpfs {
		out = append(out, store{t.Path, max(t.Size, 4096)})
	}
	return out
}

// FolderBytes is what the memory-backed folders of a sandbox with limits l
// and the extra folders tmpfs may hold together: /tmp, /dev/shm and the
// home at l.TmpSize each (its default when unset), and tmpfs. It must fit
// within l.Memory for the sandbox to start.
func FolderBytes(l Limits, tmpfs []Tmpfs) int64 {
	l.defaults()
	var n int64
	for _, st := range stores(Spec{Limits: l, Tmpfs: tmpfs}) {
		n += st.size
	}
	return n
}

// args are bwrap's options for spec. They reach bwrap through a pipe
// (--args), so that no process of the host or of the sandbox reads them,
// with the host's folder names and the program's environment, on a
// command line; the program and its arguments follow on bwrap's own. bwrap runs as HostUID: the folders shown
// in the sandbox, and the folders above them, must be open to it.
//
// No program but the one of spec runs inside the sandbox: its limits are
// set from the host (setLimits) and its environment by bwrap, so nothing
// inside reads the loader configuration of an image root but the image's
// own program.
func (s *Sandbox) args(spec Spec) ([]string, error) {
	if len(spec.Args) == 0 {
		return nil, errors.New("sandbox: no program")
	}
	if spec.Dir == "" {
		spec.Dir = Home
	}
	if total := FolderBytes(spec.Limits, spec.Tmpfs); total > spec.Limits.Memory {
		return nil, fmt.Errorf("sandbox: its memory-backed folders (/tmp, /dev/shm, home and %d more: %d MiB) do not fit in its memory bound of %d MiB",
			len(spec.Tmpfs), total>>20, spec.Limits.Memory>>20)
	}
	uid := strconv.Itoa(UID)
	args := []string{
		"--unshare-user", "--uid", uid, "--gid", uid,
		"--unshare-ipc", "--unshare-pid", "--unshare-uts", "--hostname", Hostname, "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--seccomp", "6", // the filter's pipe (launch)
	}
	if s.disableUserns {
		args = append(args, "--disable-userns", "--assert-userns-disabled")
	}
	if !spec.Network {
		args = append(args, "--unshare-net")
	}
	if spec.RootFS != "" {
		args = append(args, "--ro-bind", spec.RootFS, "/")
	} else {
		args = append(args, "--ro-bind", "/usr", "/usr")
		for _, l := range []string{"bin", "sbin", "lib", "lib64", "lib32", "libx32"} {
			// Merged-/usr systems link these; others keep folders.
			if t, err := os.Readlink("/" + l); err == nil {
				args = append(args, "--symlink", t, "/"+l)
			} else if st, err := os.Stat("/" + l); err == nil && st.IsDir() {
				args = append(args, "--ro-bind", "/"+l, "/"+l)
			}
		}
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev")
	for i, st := range stores(spec) {
		perms := "0700"
		if i < 2 { // /tmp and /dev/shm are shared folders
			perms = "1777"
		}
		args = append(args, "--perms", perms, "--size", strconv.FormatInt(st.size, 10), "--tmpfs", st.path)
	}
	for _, m := range spec.Mounts {
		if m.Writable {
			args = append(args, "--bind", m.Host, m.Sandbox)
		} else {
			args = append(args, "--ro-bind", m.Host, m.Sandbox)
		}
	}
	for _, h := range spec.Hide {
		if st, err := os.Stat(h); err == nil && st.IsDir() {
			args = append(args, "--size", "4096", "--tmpfs", h, "--remount-ro", h)
		} else {
			args = append(args, "--ro-bind", "/dev/null", h)
		}
	}
	// bwrap makes its root and /dev on tmpfs with no size, writable by
	// the program: read-only, they hold no memory the bound misses.
	args = append(args, "--remount-ro", "/dev", "--remount-ro", "/")
	args = append(args, "--chdir", spec.Dir, "--clearenv")
	env := spec.Env
	if !hasKey(env, "PATH") {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	if !hasKey(env, "HOME") {
		env = append(env, "HOME="+Home)
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(k) || strings.ContainsRune(kv, 0) {
			return nil, fmt.Errorf("sandbox: environment variable %q: not NAME=VALUE with a plain name", k)
		}
		args = append(args, "--setenv", k, v)
	}
	for _, a := range spec.Args {
		if strings.ContainsRune(a, 0) {
			return nil, fmt.Errorf("sandbox: argument %q holds a NUL byte", a)
		}
	}
	return args, nil
}

func hasKey(env []string, key string) bool {
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			return true
		}
	}
	return false
}
