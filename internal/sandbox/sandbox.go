// Package sandbox runs a stranger's program under bubblewrap (bwrap), as
// any user: a user namespace of its own in which the program is an
// unprivileged id with no capability and cannot make further user
// namespaces; no network (a namespace with only a loopback of its own)
// unless the step asks for the host's; a read-only view of the system's
// /usr (the runtimes), or of a root filesystem folder, and of the folders
// the caller names; a read-only root and /dev; a private writable home,
// /tmp and /dev/shm on size-capped tmpfs; no other file of the machine;
// limits on CPU time, processes and file size; one bound on the memory of
// the sandbox, its processes' resident memory, its tmpfs folders and its
// memfd files together; no System V IPC objects (seccomp.go); and a PID
// namespace whose init dies with its parent, so that every process of the
// sandbox ends with it.
//
// Nothing runs inside the sandbox before the program: bwrap holds its
// first process while the host sets its limits (prlimit(2)), and sets the
// program's environment itself. bwrap and setpriv run with an empty
// environment and read their arguments from a pipe, so no command line
// shows a host folder or a variable. Run as root, the sandbox first drops
// to an unprivileged host user (RootUser) with setpriv, so that no helper
// it starts is root either.
//
// Nothing here runs a program bare: where a tool is missing, or bwrap
// cannot make its namespaces on this machine, Find fails with an error
// that says what to install or which setting to change (Check lists
// them all).
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Install names what a machine needs for Find to succeed.
const Install = "bubblewrap (bwrap) and util-linux (setpriv, for root); on Debian or Ubuntu: apt-get install -y bubblewrap util-linux"

// Home is the sandboxed program's home folder, a private tmpfs.
const Home = "/home/sandbox"

// Hostname is the sandbox's host name, the same on every machine, so that
// what a server prints of it does not tell one crawl's machine from
// another's.
const Hostname = "sandbox"

// UID is the user and group id of the program inside its user namespace;
// on the host it is the id of the user who runs the sandbox (RootUser for
// root).
const UID = 1000

// RootUser is the host user id a sandbox started by root runs as: the
// overflow user "nobody", which owns nothing. A sandbox never kills by
// user id, so other processes of this id are never touched.
const RootUser = 65534

// Defaults of Limits.
const (
	DefaultCPU = 60 * time.Second
	// DefaultMemory bounds the memory of one sandbox, its processes'
	// resident memory, tmpfs folders and memfd files together: two sandboxes at
	// once (the default concurrency) and the crawl fit a 24 GiB machine
	// with room to spare.
	DefaultMemory   = 4 << 30
	DefaultProcs    = 64 // threads count too: node alone starts about ten
	DefaultFileSize = 64 << 20
	DefaultTmpSize  = 64 << 20
)

// Limits bound one sandbox. Zero fields take the defaults.
type Limits struct {
	// CPU is the CPU time of each process (RLIMIT_CPU).
	CPU time.Duration
	// Memory bounds the memory of the sandbox, bytes: the resident
	// memory of all its processes and the bytes of its tmpfs folders
	// together. The sandbox is killed when they pass it; the folders'
	// sizes must add up within it.
	Memory int64
	// ProcessMemory, when set, is the address space of each process
	// (RLIMIT_AS). It is unset by default: runtimes reserve address space
	// they never touch (V8's heap, Go's arenas), and such a limit kills
	// servers their clients run; Memory bounds what they hold.
	ProcessMemory int64
	// Procs is the processes and threads of the sandbox (RLIMIT_NPROC,
	// counted in the sandbox's own user namespace).
	Procs int
	// FileSize is the largest file a process may write (RLIMIT_FSIZE).
	FileSize int64
	// TmpSize is the size of the home, of /tmp and of /dev/shm, each.
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
	bwrap, setpriv, prlimit string
	// hostUID is the host user the sandboxed programs run as.
	hostUID int
	// disableUserns says bwrap can refuse nested user namespaces.
	disableUserns bool
	// filter is the seccomp program every sandbox runs under (seccomp.go).
	filter []byte
}

// Find looks for bwrap and setpriv, and checks, by running
// /bin/true in a sandbox, that bwrap can make its namespaces here (it
// cannot where unprivileged user namespaces are forbidden, or in some
// containers). The error says what is missing and how to allow it.
func Find(ctx context.Context) (*Sandbox, error) {
	s, probs := find(ctx)
	if len(probs) > 0 {
		return nil, errors.New("sandbox: " + strings.Join(probs, "; "))
	}
	return s, nil
}

func find(ctx context.Context) (*Sandbox, []string) {
	if !isLinux {
		return nil, []string{"bubblewrap runs only on Linux; packaged servers run only in a sandbox"}
	}
	filter, err := seccompProgram()
	if err != nil {
		return nil, []string{err.Error()}
	}
	s := &Sandbox{hostUID: os.Getuid(), filter: filter}
	var probs []string
	type tool struct {
		name, pkg string
		path      *string
	}
	tools := []tool{{"bwrap", "bubblewrap", &s.bwrap}}
	if os.Geteuid() == 0 {
		// Root drops to RootUser before bwrap runs (Command), and sets
		// the sandbox's limits as that user (setLimits).
		tools = append(tools, tool{"setpriv", "util-linux", &s.setpriv}, tool{"prlimit", "util-linux", &s.prlimit})
	}
	for _, t := range tools {
		p, err := exec.LookPath(t.name)
		if err != nil {
			probs = append(probs, fmt.Sprintf("no %s on PATH (Debian or Ubuntu: apt-get install -y %s)", t.name, t.pkg))
			continue
		}
		*t.path = p
	}
	if len(probs) > 0 {
		return nil, probs
	}
	if os.Geteuid() == 0 {
		s.hostUID = RootUser
	}
	help, _ := exec.CommandContext(ctx, s.bwrap, "--help").CombinedOutput()
	s.disableUserns = bytes.Contains(help, []byte("--disable-userns"))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := s.Command(ctx, Spec{Args: []string{"/bin/true"}})
	var stderr bytes.Buffer
	c.Cmd.Stderr = &stderr
	if err := c.Run(); err != nil {
		return nil, []string{fmt.Sprintf("bwrap cannot make its namespaces here as user %d (%v: %s); %s",
			os.Getuid(), err, strings.TrimSpace(stderr.String()), UsernsHint())}
	}
	return s, nil
}

// HostUID is the host user id the sandboxed programs run as: the caller's,
// or RootUser when the caller is root. Folders a sandbox reads or writes
// must be open to it.
func (s *Sandbox) HostUID() int { return s.hostUID }

// Mount is a host folder (or file) shown in the sandbox: read-only unless
// Writable.
type Mount struct {
	Host, Sandbox string
	Writable      bool
}

// Tmpfs is a size-capped private folder of the sandbox: its writes stop
// at Size bytes, when they happen.
type Tmpfs struct {
	Path string
	Size int64
}

// Spec is one program to run. A package runner uses it for both of its
// steps: the install step (Network, a Tmpfs to install into, a writable
// Mount to copy the result to) and the run step (no network, the
// installed folder mounted read-only, the entry's Env for the server
// alone).
type Spec struct {
	// Args is the program and its arguments, as paths inside the sandbox.
	Args []string
	// Env is the program's environment, KEY=VALUE; PATH and HOME are set
	// unless given. It reaches the program alone, never a helper. Names
	// must be [A-Za-z_][A-Za-z0-9_]*.
	Env []string
	// RootFS, when set, is a host folder shown read-only as the sandbox's
	// root (an unpacked image); otherwise the host's /usr (with /bin,
	// /lib, /lib64, /sbin) is.
	RootFS string
	// Mounts are shown over the root, in order.
	Mounts []Mount
	// Tmpfs are extra size-capped private folders.
	Tmpfs []Tmpfs
	// Hide are paths inside the sandbox made empty (a folder) or
	// unexecutable (a file), e.g. a tool a step must not run.
	Hide []string
	// Dir is the working folder inside the sandbox; empty means Home.
	Dir string
	// Network shares the host's network (an install step that fetches
	// through a Proxy); otherwise the sandbox has only a loopback of its
	// own.
	Network bool
	// Limits bound the sandbox.
	Limits Limits
}

// Cmd is a sandboxed program. Its Cmd's Stdin, Stdout and Stderr are the
// caller's to set before Start; Wait (or Run) returns once every process
// of the sandbox has ended.
type Cmd struct {
	Cmd *exec.Cmd
	err error
	mem int64

	limits Limits
	sb     *Sandbox
	// argData is bwrap's arguments, NUL-separated, read from a pipe.
	argData []byte
	stores  []store

	done chan struct{}
	mu   sync.Mutex
	// The fields below are the watch's; mu guards them.
	init     *initProc
	storeFDs []int // the memory-backed folders, held open from the host
	ended    bool  // Wait has let the folders go
	peak     int64
	overMem  bool
	pids     map[int]bool // every process of the sandbox seen
}

// ErrMemory is the error of a sandbox killed because its processes
// together passed Limits.Memory.
var ErrMemory = errors.New("the sandbox's processes together passed its memory bound and were killed")

// Command returns the sandboxed program of spec, bound to ctx: when ctx
// ends, every process of the sandbox is killed. A bad spec is Start's
// error.
func (s *Sandbox) Command(ctx context.Context, spec Spec) *Cmd {
	spec.Limits.defaults()
	bargs, err := s.args(spec)
	var data []byte
	for _, a := range bargs {
		data = append(append(data, a...), 0)
	}
	// The pipes Start makes are the program's descriptors 3, 4, 5 and 6.
	args := append([]string{"--args", "3", "--info-fd", "4", "--block-fd", "5", "--"}, spec.Args...)
	name := s.bwrap
	if s.hostUID != os.Getuid() {
		// Root drops to an unprivileged host user before bwrap runs, so
		// that bwrap makes its namespaces as that user: nothing it
		// starts is root, or holds a capability of the host.
		args = append(s.dropArgs(s.bwrap), args...)
		name = s.setpriv
	}
	c := exec.CommandContext(ctx, name, args...)
	c.Env = []string{}
	setProcAttr(c)
	cmd := &Cmd{Cmd: c, err: err, mem: spec.Limits.Memory, limits: spec.Limits, sb: s, argData: data,
		stores: stores(spec), done: make(chan struct{}), pids: map[int]bool{}}
	c.Cancel = func() error { return cmd.kill() }
	c.WaitDelay = 5 * time.Second
	return cmd
}

// dropArgs are setpriv's arguments that run program as HostUID, with no
// capability.
func (s *Sandbox) dropArgs(program string) []string {
	id := strconv.Itoa(s.hostUID)
	return []string{"--reuid=" + id, "--regid=" + id, "--clear-groups",
		"--inh-caps=-all", "--bounding-set=-all", "--", program}
}

// Start starts the sandbox and, once its limits are set, the program and
// the watch on its memory (see launch).
func (c *Cmd) Start() error {
	if c.err != nil {
		return c.err
	}
	if err := c.launch(); err != nil {
		return err
	}
	go c.watch()
	return nil
}

// Kill kills every process of the sandbox; Wait still has to be called.
func (c *Cmd) Kill() { _ = c.kill() }

// Wait waits for the program and for every process of its sandbox to end:
// they are killed with the PID namespace's init when the program ends
// (bwrap's init exits with it), and the kernel ends the namespace's
// processes before the init's own exit completes.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	c.kill()
	c.mu.Lock()
	in := c.init
	c.mu.Unlock()
	if in != nil {
		in.wait()
	}
	close(c.done)
	c.mu.Lock()
	over := c.overMem
	c.closeStores()
	c.mu.Unlock()
	if over {
		return fmt.Errorf("%w (%d bytes)", ErrMemory, c.mem)
	}
	return err
}

// Run starts the program and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// MemoryExceeded says the sandbox was killed for passing its memory bound.
func (c *Cmd) MemoryExceeded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.overMem
}

// PeakMemory is the most resident memory the sandbox's processes held
// together, as the watch saw it.
func (c *Cmd) PeakMemory() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

// Processes are the host process ids of every process the watch saw in
// the sandbox: what a test checks has ended once Wait returns.
func (c *Cmd) Processes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int, 0, len(c.pids))
	for p := range c.pids {
		out = append(out, p)
	}
	return out
}
