// Package sandbox runs a stranger's program under bubblewrap (bwrap): no
// network (a namespace with only a loopback of its own), a read-only view
// of the system's /usr (the runtimes) and of the folders the caller names,
// a private writable home and /tmp on size-capped tmpfs, no other file of
// the machine, an empty environment but for the variables the caller sets,
// an unprivileged user id, limits on CPU time, address space, processes
// and file size (prlimit), and a process tree that is killed whole at the
// end (a PID namespace whose init dies with its parent).
//
// Nothing here runs a program bare: where bwrap, prlimit or setpriv is
// missing, or bwrap cannot make its namespaces on this machine, Find
// fails with an error that says what to install.
package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Install names what a machine needs for Find to succeed.
const Install = "bubblewrap (bwrap) and util-linux (prlimit, setpriv); on Debian or Ubuntu: apt-get install -y bubblewrap util-linux"

// Home is the sandboxed program's home folder, a private tmpfs.
const Home = "/home/sandbox"

// Defaults of Limits.
const (
	DefaultCPU      = 60 * time.Second
	DefaultMemory   = 4 << 30 // address space: V8 reserves much it never touches
	DefaultProcs    = 64      // threads count too: node alone starts about ten
	DefaultFileSize = 64 << 20
	DefaultTmpSize  = 64 << 20
)

// Limits bound one sandboxed program. Zero fields take the defaults.
type Limits struct {
	// CPU is the CPU time of each process (RLIMIT_CPU).
	CPU time.Duration
	// Memory is the address space of each process (RLIMIT_AS), bytes.
	Memory int64
	// Procs is the processes and threads of the sandbox's user
	// (RLIMIT_NPROC); each sandbox of a crawl runs as its own user, so
	// the limit is the sandbox's.
	Procs int
	// FileSize is the largest file a process may write (RLIMIT_FSIZE).
	FileSize int64
	// TmpSize is the size of the home and of /tmp, each.
	TmpSize int64
}

func (l *Limits) defaults() {
	if l.CPU <= 0 {
		l.CPU = DefaultCPU
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.Procs <= 0 {
		l.Procs = DefaultProcs
	}
	if l.FileSize <= 0 {
		l.FileSize = DefaultFileSize
	}
	if l.TmpSize <= 0 {
		l.TmpSize = DefaultTmpSize
	}
}

// Sandbox is a working bwrap on this machine.
type Sandbox struct {
	bwrap, prlimit, setpriv string
}

// Find looks for bwrap, prlimit and setpriv and checks, by running
// /bin/true in a sandbox, that bwrap can make its namespaces here (it
// cannot in some containers). The error says what is missing.
func Find(ctx context.Context) (*Sandbox, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("sandbox: bubblewrap runs only on Linux; packaged servers run only in a sandbox")
	}
	s := &Sandbox{}
	for _, t := range []struct {
		name string
		path *string
	}{{"bwrap", &s.bwrap}, {"prlimit", &s.prlimit}, {"setpriv", &s.setpriv}} {
		p, err := exec.LookPath(t.name)
		if err != nil {
			return nil, fmt.Errorf("sandbox: no %s on PATH; packaged servers run only in a sandbox, which needs %s", t.name, Install)
		}
		*t.path = p
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := s.Command(ctx, Spec{Args: []string{"true"}})
	var stderr bytes.Buffer
	c.Cmd.Stderr = &stderr
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("sandbox: bwrap does not work on this machine (%v: %s); packaged servers run only in a sandbox", err, strings.TrimSpace(stderr.String()))
	}
	return s, nil
}

// MaxSlots is the most sandboxes one process runs at once.
const MaxSlots = 64

// firstUID is the lowest user id a sandbox runs as.
const firstUID = 100000

// SlotUID is the user id sandbox slot slot (0 to MaxSlots-1) of this
// process runs as: its own, so that the process limit of one slot is not
// shared and the processes left behind by one sandbox are told from every
// other's, even those of another crawl or scan on the machine (the ids
// are spread by process id).
func SlotUID(slot int) int {
	return firstUID + (os.Getpid()%10000)*MaxSlots + slot
}

// Mount is a host folder shown read-only in the sandbox.
type Mount struct {
	Host, Sandbox string
}

// Spec is one program to run.
type Spec struct {
	// Args is the program and its arguments, as paths inside the sandbox.
	Args []string
	// Env is the whole environment, KEY=VALUE; PATH and HOME are set
	// unless given.
	Env []string
	// Mounts are shown read-only; /usr (with /bin, /lib, /lib64, /sbin)
	// always is.
	Mounts []Mount
	// Dir is the working folder inside the sandbox; empty means Home.
	Dir string
	// UID is the user and group id the program runs as; 0 means
	// SlotUID(0).
	// It must be the sandbox's alone while it runs: Wait kills every
	// process of it.
	UID int
	// Limits bound the program.
	Limits Limits
}

// Cmd is a sandboxed program. Its Cmd's Stdin, Stdout and Stderr are the
// caller's to set before Start; Wait (or Run) kills what is left of the
// process tree once the program exits or ctx ends.
type Cmd struct {
	Cmd *exec.Cmd
	uid int
}

// Command returns the sandboxed program of spec, bound to ctx: when ctx
// ends, the whole process tree is killed.
func (s *Sandbox) Command(ctx context.Context, spec Spec) *Cmd {
	spec.Limits.defaults()
	if spec.UID <= 0 {
		spec.UID = SlotUID(0)
	}
	if spec.Dir == "" {
		spec.Dir = Home
	}
	args := []string{
		// Every namespace but the user's: as root, an unprivileged id in
		// the host's user namespace is what makes RLIMIT_NPROC hold.
		"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session",
		"--ro-bind", "/usr", "/usr",
	}
	for _, l := range []string{"bin", "sbin", "lib", "lib64", "lib32", "libx32"} {
		// Merged-/usr systems link these; others keep folders.
		if t, err := os.Readlink("/" + l); err == nil {
			args = append(args, "--symlink", t, "/"+l)
		} else if st, err := os.Stat("/" + l); err == nil && st.IsDir() {
			args = append(args, "--ro-bind", "/"+l, "/"+l)
		}
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev",
		"--perms", "1777", "--size", strconv.FormatInt(spec.Limits.TmpSize, 10), "--tmpfs", "/tmp",
		// The tmpfs is the sandbox's alone; 0777 lets the unprivileged
		// id write to a folder bwrap makes as root.
		"--perms", "0777", "--size", strconv.FormatInt(spec.Limits.TmpSize, 10), "--tmpfs", Home)
	for _, m := range spec.Mounts {
		args = append(args, "--ro-bind", m.Host, m.Sandbox)
	}
	args = append(args, "--chdir", spec.Dir, "--clearenv")
	env := spec.Env
	if !hasKey(env, "PATH") {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	if !hasKey(env, "HOME") {
		env = append(env, "HOME="+Home)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	id := strconv.Itoa(spec.UID)
	args = append(args, s.setpriv, "--reuid="+id, "--regid="+id, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--",
		s.prlimit,
		"--cpu="+strconv.FormatInt(max(int64(spec.Limits.CPU/time.Second), 1), 10),
		"--as="+strconv.FormatInt(spec.Limits.Memory, 10),
		"--nproc="+strconv.Itoa(spec.Limits.Procs),
		"--fsize="+strconv.FormatInt(spec.Limits.FileSize, 10),
		"--core=0", "--")
	args = append(args, spec.Args...)
	c := exec.CommandContext(ctx, s.bwrap, args...)
	c.Env = []string{}
	setProcAttr(c)
	c.Cancel = func() error { return killTree(c) }
	c.WaitDelay = 5 * time.Second
	return &Cmd{Cmd: c, uid: spec.UID}
}

func hasKey(env []string, key string) bool {
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			return true
		}
	}
	return false
}

// Start starts the program.
func (c *Cmd) Start() error { return c.Cmd.Start() }

// Kill kills the whole process tree; Wait still has to be called, and
// returns once every process of the tree has ended.
func (c *Cmd) Kill() {
	_ = killTree(c.Cmd)
}

// Wait waits for the program, then kills whatever it left behind: every
// process of the sandbox's user id (bwrap reports the program's exit
// without waiting for its orphans). When Wait returns, no process of the
// sandbox is left.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	c.reap()
	return err
}

// reapWait bounds the wait for killed processes to end.
const reapWait = 10 * time.Second

func (c *Cmd) reap() {
	deadline := time.Now().Add(reapWait)
	for time.Now().Before(deadline) {
		left := ProcessesOf(c.uid)
		if len(left) == 0 {
			return
		}
		for _, pid := range left {
			killPID(pid)
		}
		// SIGKILL is delivered at once but a process takes a moment to
		// end; look again shortly.
		time.Sleep(time.Millisecond)
	}
}

// Run starts the program and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// ProcessesOf lists the ids of the host's processes running as uid
// (zombies left out): what a test checks is empty once a sandbox is done.
func ProcessesOf(uid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var state string
		ruid := -1
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "State:"); ok {
				state = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					ruid, _ = strconv.Atoi(f[0])
				}
			}
		}
		if ruid == uid && !strings.HasPrefix(state, "Z") {
			out = append(out, pid)
		}
	}
	return out
}
