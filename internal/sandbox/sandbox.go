// Package sandbox runs a stranger's program under bubblewrap (bwrap), as
// any user: a user namespace of its own in which the program is an
// unprivileged id with no capability and cannot make further user
// namespaces; no network (a namespace with only a loopback of its own)
// unless the step asks for the host's; a read-only view of the system's
// /usr (the runtimes), or of a root filesystem folder, and of the folders
// the caller names; a private writable home and /tmp on size-capped tmpfs;
// no other file of the machine; limits on CPU time, address space,
// processes and file size; one bound on the resident memory of all its
// processes together; and a PID namespace whose init dies with its parent,
// so that every process of the sandbox ends with it.
//
// Nothing of the program's environment reaches a helper: bwrap, setpriv
// and prlimit run with an empty environment, and the program's variables
// are set by env(1) in the last exec before the program, inside the
// sandbox. Run as root, the sandbox first drops to an unprivileged host
// user (RootUser) with setpriv, so that no helper it starts is root
// either.
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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Install names what a machine needs for Find to succeed.
const Install = "bubblewrap (bwrap) and util-linux (prlimit, setpriv); on Debian or Ubuntu: apt-get install -y bubblewrap util-linux"

// Home is the sandboxed program's home folder, a private tmpfs.
const Home = "/home/sandbox"

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
	// DefaultMemory bounds the resident memory of all the processes of one
	// sandbox together: two sandboxes at once (the default concurrency)
	// and the crawl fit a 24 GiB machine with room to spare.
	DefaultMemory        = 4 << 30
	DefaultProcessMemory = 4 << 30 // address space: V8 reserves much it never touches
	DefaultProcs         = 64      // threads count too: node alone starts about ten
	DefaultFileSize      = 64 << 20
	DefaultTmpSize       = 64 << 20
)

// Limits bound one sandbox. Zero fields take the defaults.
type Limits struct {
	// CPU is the CPU time of each process (RLIMIT_CPU).
	CPU time.Duration
	// Memory bounds the resident memory of all the sandbox's processes
	// together, bytes: the sandbox is killed when they pass it.
	Memory int64
	// ProcessMemory is the address space of each process (RLIMIT_AS).
	ProcessMemory int64
	// Procs is the processes and threads of the sandbox (RLIMIT_NPROC,
	// counted in the sandbox's own user namespace).
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
	if l.ProcessMemory <= 0 {
		l.ProcessMemory = DefaultProcessMemory
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
	bwrap, prlimit, setpriv, env string
	// hostUID is the host user the sandboxed programs run as.
	hostUID int
	// disableUserns says bwrap can refuse nested user namespaces.
	disableUserns bool
}

// Find looks for bwrap, prlimit, setpriv and env, and checks, by running
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
	s := &Sandbox{hostUID: os.Getuid()}
	var probs []string
	for _, t := range []struct {
		name, pkg string
		path      *string
	}{{"bwrap", "bubblewrap", &s.bwrap}, {"prlimit", "util-linux", &s.prlimit}, {"setpriv", "util-linux", &s.setpriv}, {"env", "coreutils", &s.env}} {
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

// envName is a variable name env(1) and every shell read as one.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Cmd is a sandboxed program. Its Cmd's Stdin, Stdout and Stderr are the
// caller's to set before Start; Wait (or Run) returns once every process
// of the sandbox has ended.
type Cmd struct {
	Cmd *exec.Cmd
	err error
	mem int64

	done    chan struct{}
	mu      sync.Mutex
	init    *initProc
	peak    int64
	overMem bool
	pids    map[int]bool // every process of the sandbox seen
}

// ErrMemory is the error of a sandbox killed because its processes
// together passed Limits.Memory.
var ErrMemory = errors.New("the sandbox's processes together passed its memory bound and were killed")

// Command returns the sandboxed program of spec, bound to ctx: when ctx
// ends, every process of the sandbox is killed. A bad spec is Start's
// error.
func (s *Sandbox) Command(ctx context.Context, spec Spec) *Cmd {
	spec.Limits.defaults()
	args, err := s.args(spec)
	name := s.bwrap
	if s.hostUID != os.Getuid() {
		// Root drops to an unprivileged host user before bwrap runs, so
		// that bwrap makes its namespaces as that user: nothing it
		// starts is root, or holds a capability of the host.
		id := strconv.Itoa(s.hostUID)
		args = append([]string{"--reuid=" + id, "--regid=" + id, "--clear-groups",
			"--inh-caps=-all", "--bounding-set=-all", "--", s.bwrap}, args...)
		name = s.setpriv
	}
	c := exec.CommandContext(ctx, name, args...)
	c.Env = []string{}
	setProcAttr(c)
	cmd := &Cmd{Cmd: c, err: err, mem: spec.Limits.Memory, done: make(chan struct{}), pids: map[int]bool{}}
	c.Cancel = func() error { return cmd.kill() }
	c.WaitDelay = 5 * time.Second
	return cmd
}

// args are bwrap's arguments for spec. bwrap runs as HostUID: the
// folders shown in the sandbox, and the folders above them, must be open
// to it.
func (s *Sandbox) args(spec Spec) ([]string, error) {
	if len(spec.Args) == 0 {
		return nil, errors.New("sandbox: no program")
	}
	if strings.Contains(spec.Args[0], "=") {
		return nil, fmt.Errorf("sandbox: program %q: a name with = is not run", spec.Args[0])
	}
	if spec.Dir == "" {
		spec.Dir = Home
	}
	uid := strconv.Itoa(UID)
	args := []string{
		"--unshare-user", "--uid", uid, "--gid", uid,
		"--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
	}
	if s.disableUserns {
		args = append(args, "--disable-userns", "--assert-userns-disabled")
	}
	if !spec.Network {
		args = append(args, "--unshare-net")
	}
	if spec.RootFS != "" {
		args = append(args, "--ro-bind", spec.RootFS, "/", "--ro-bind", "/usr", HostDir+"/usr")
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
	tmp := strconv.FormatInt(spec.Limits.TmpSize, 10)
	args = append(args, "--proc", "/proc", "--dev", "/dev",
		"--perms", "1777", "--size", tmp, "--tmpfs", "/tmp",
		"--perms", "0700", "--size", tmp, "--tmpfs", Home)
	for _, t := range spec.Tmpfs {
		args = append(args, "--perms", "0700", "--size", strconv.FormatInt(max(t.Size, 4096), 10), "--tmpfs", t.Path)
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
			args = append(args, "--tmpfs", h)
		} else {
			args = append(args, "--ro-bind", "/dev/null", h)
		}
	}
	args = append(args, "--chdir", spec.Dir, "--clearenv")
	// The helpers inside run with no variable at all: env(1), the last
	// exec before the program, sets the program's.
	prlimit, envCmd := []string{s.prlimit}, []string{s.env}
	if spec.RootFS != "" {
		// The image root has no host /usr: the helpers run from HostDir.
		var err error
		if prlimit, err = hostHelper(s.prlimit); err != nil {
			return nil, err
		}
		if envCmd, err = hostHelper(s.env); err != nil {
			return nil, err
		}
	}
	args = append(args, prlimit...)
	args = append(args,
		"--cpu="+strconv.FormatInt(max(int64(spec.Limits.CPU/time.Second), 1), 10),
		"--as="+strconv.FormatInt(spec.Limits.ProcessMemory, 10),
		"--nproc="+strconv.Itoa(spec.Limits.Procs),
		"--fsize="+strconv.FormatInt(spec.Limits.FileSize, 10),
		"--core=0", "--")
	args = append(append(args, envCmd...), "-i", "--")
	env := spec.Env
	if !hasKey(env, "PATH") {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	if !hasKey(env, "HOME") {
		env = append(env, "HOME="+Home)
	}
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(k) || strings.ContainsRune(kv, 0) {
			return nil, fmt.Errorf("sandbox: environment variable %q: not NAME=VALUE with a plain name", k)
		}
		args = append(args, kv)
	}
	return append(args, spec.Args...), nil
}

func hasKey(env []string, key string) bool {
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			return true
		}
	}
	return false
}

// Start starts the program and the watch on its memory.
func (c *Cmd) Start() error {
	if c.err != nil {
		return c.err
	}
	if err := c.Cmd.Start(); err != nil {
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

// watchEvery is how often the watch sums the sandbox's memory.
const watchEvery = 20 * time.Millisecond

// watch sums the resident memory of the sandbox's processes (bwrap's
// descendants: the PID namespace's init adopts its orphans, so none
// escapes the tree) and kills the sandbox when they pass the bound.
// This is the bound where no delegated cgroup is at hand: a process can
// pass it by what it allocates within one period, and RLIMIT_AS bounds
// each process besides.
func (c *Cmd) watch() {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		c.sample()
		select {
		case <-c.done:
			return
		case <-t.C:
		}
	}
}

func (c *Cmd) sample() {
	if c.Cmd.Process == nil {
		return
	}
	pids := descendants(c.Cmd.Process.Pid)
	var sum int64
	for _, p := range pids {
		sum += rss(p)
	}
	c.mu.Lock()
	for _, p := range pids {
		c.pids[p] = true
	}
	if c.init == nil && len(pids) > 0 {
		c.init = openInit(pids[0])
	}
	c.peak = max(c.peak, sum)
	over := sum > c.mem && !c.overMem
	if over {
		c.overMem = true
	}
	c.mu.Unlock()
	if over {
		_ = c.kill()
	}
}

// kill kills the init of the sandbox's PID namespace, bwrap's child: the
// kernel then kills every process of the namespace. Before the namespace
// exists, bwrap's process group is killed instead.
func (c *Cmd) kill() error {
	if c.Cmd.Process == nil {
		return nil
	}
	return killTree(c.Cmd.Process.Pid)
}
