package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestSandboxMemoryCountsFolders: the memory-backed folders (/tmp,
// /dev/shm, the home) are capped each, and what they hold counts in the
// one memory bound with the processes' resident memory: three folders of
// 100 MiB and a process holding 250 MiB pass a bound of 512 MiB together,
// though the process alone (node and its buffer, about 300 MiB) stays well
// under it. The folders alone, with node, stay under it too, with room
// for node's own memory on a busy machine.
func TestSandboxMemoryCountsFolders(t *testing.T) {
	s, node := need(t)
	const mib = 1 << 20
	js := `const fs=require("fs");
const fill=(p,n)=>{const b=Buffer.alloc(1<<20,7);const fd=fs.openSync(p,"w");try{for(let i=0;i<n;i++)fs.writeSync(fd,b)}finally{fs.closeSync(fd)}};
try{fill("/dev/shm/big",200);console.log("shm unbounded")}catch(e){console.log("shm capped "+e.code)}
fs.unlinkSync("/dev/shm/big");
for(const p of ["/tmp/a","/dev/shm/a",process.env.HOME+"/a"])fill(p,100);
console.log("folders full");
const held=Buffer.alloc(250<<20,1);
setInterval(()=>{held[0]++},100);
setTimeout(()=>{console.log("survived");process.exit(0)},60000)`
	c := s.Command(t.Context(), Spec{Args: []string{node, "-e", js}, Limits: Limits{Memory: 512 * mib, TmpSize: 128 * mib, FileSize: 256 * mib}})
	var stdout, stderr bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &stdout, &stderr
	err := c.Run()
	got := stdout.String()
	if !strings.Contains(got, "shm capped ENOSPC") || !strings.Contains(got, "folders full") {
		t.Fatalf("the folders did not fill as sized: %q %s", got, stderr.String()[max(0, stderr.Len()-600):])
	}
	if !errors.Is(err, ErrMemory) || strings.Contains(got, "survived") {
		t.Fatalf("err %v, output %q: the folders' bytes were not counted", err, got)
	}
	if p := c.PeakMemory(); p < 300*mib {
		t.Errorf("peak %d MiB: the folders' 300 MiB were not in it", p>>20)
	}
	assertGone(t, c)
}

// TestSandboxFoldersFitTheBound: folders whose sizes add up past the
// memory bound are refused before anything runs.
func TestSandboxFoldersFitTheBound(t *testing.T) {
	s, _ := need(t)
	c := s.Command(t.Context(), Spec{Args: []string{"/usr/bin/true"},
		Tmpfs:  []Tmpfs{{Path: "/install", Size: 900 << 20}},
		Limits: Limits{Memory: 1 << 30}})
	if err := c.Run(); err == nil || !strings.Contains(err.Error(), "do not fit in its memory bound") {
		t.Errorf("err %v, want the folders refused", err)
	}
}

// TestSandboxImageLoaderConfig: an image root's /etc/ld.so.preload loads
// into the image's own program alone: nothing of ours runs in the image
// before it, and the limits set from the host hold against what the
// library tries (raising them).
func TestSandboxImageLoaderConfig(t *testing.T) {
	s, _ := need(t)
	cc := testenv.Need(t, "cc", "a C compiler builds the hostile preload library; apt-get install -y gcc")
	root := openDir(t)
	for _, d := range append([]string{"usr", "etc", "evil"}, MountPoints...) {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []string{"bin", "lib", "lib64"} {
		if target, err := os.Readlink("/" + l); err == nil {
			if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
				t.Fatal(err)
			}
		}
	}
	src := filepath.Join(root, "evil", "evil.c")
	if err := os.WriteFile(src, []byte(raiseC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(root, "evil", "evil.so"), src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "ld.so.preload"), []byte("/evil/evil.so\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := s.Command(t.Context(), Spec{Args: []string{"/usr/bin/cat", "/proc/self/limits"}, RootFS: root,
		Mounts: []Mount{{Host: "/usr", Sandbox: "/usr"}},
		Limits: Limits{Procs: 12, FileSize: 1 << 20}})
	var stdout, stderr bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var loads []string
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if strings.HasPrefix(l, "EVIL ") {
			loads = append(loads, l)
		}
	}
	if len(loads) == 0 {
		t.Fatalf("the preload never loaded (the test proves nothing): %q", stderr.String())
	}
	for _, l := range loads {
		if l != "EVIL cat raise-refused" {
			t.Errorf("the image's loader configuration ran outside its program, or raised a limit: %q", l)
		}
	}
	for _, want := range []string{"Max processes             12                   12", "Max file size             1048576              1048576"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the program's limits lack %q:\n%s", want, stdout.String())
		}
	}
}

// raiseC, preloaded, names the process it loads into and tries to lift
// its process limit, as a library that wants to escape it would.
const raiseC = `
#include <stdio.h>
#include <sys/resource.h>
__attribute__((constructor)) static void raise_limits(void) {
  char comm[64] = "";
  FILE *f = fopen("/proc/self/comm", "r"); if (f) { fscanf(f, "%63s", comm); fclose(f); }
  struct rlimit r = {RLIM_INFINITY, RLIM_INFINITY};
  fprintf(stderr, "EVIL %s %s\n", comm, setrlimit(RLIMIT_NPROC, &r) == 0 ? "raised" : "raise-refused");
}
`

// TestSandboxNoAddressSpaceLimit: Node's fetch instantiates WebAssembly,
// for which V8 reserves far more address space than it touches (10 GiB
// and more); a server that fetches must run as its clients run it, bound
// by the memory it holds, not by what it reserves.
func TestSandboxNoAddressSpaceLimit(t *testing.T) {
	s, node := need(t)
	js := `fetch("http://127.0.0.1:2").then(() => console.log("answered"), (e) => console.log("fetch " + ((e.cause && e.cause.code) || e.name + ": " + e.message)))`
	c := s.Command(t.Context(), Spec{Args: []string{node, "-e", js}})
	var stdout, stderr bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if got := strings.TrimSpace(stdout.String()); got != "fetch ECONNREFUSED" {
		t.Errorf("got %q (stderr %q), want the refused connection alone", got, stderr.String())
	}
}

// TestSandboxMemoryCountsMemfd: memfd files count in the memory bound.
// Four of 200 MiB each, under a file size limit of 256 MiB, are in no
// process's resident set and in no folder; without their count a bound
// of 512 MiB would hold 800 MiB.
func TestSandboxMemoryCountsMemfd(t *testing.T) {
	s, _ := need(t)
	python := usrPython(t)
	py := `import os, time
b = b"\1" * (1 << 20)
fds = []
for j in range(4):
    fd = os.memfd_create("held")
    for i in range(200):
        os.write(fd, b)
    fds.append(fd)
print("held 800 MiB", flush=True)
time.sleep(60)`
	c := s.Command(t.Context(), Spec{Args: []string{python, "-c", py}, Limits: Limits{Memory: 512 << 20, TmpSize: 64 << 20, FileSize: 256 << 20}})
	var stdout, stderr bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &stdout, &stderr
	err := c.Run()
	if !errors.Is(err, ErrMemory) || strings.Contains(stdout.String(), "held") {
		t.Fatalf("err %v, output %q %q: the memfd files were not counted", err, stdout.String(), stderr.String())
	}
	if p := c.PeakMemory(); p < 512<<20 {
		t.Errorf("peak %d MiB, want past the bound of 512", p>>20)
	}
	assertGone(t, c)
}

// TestSandboxRefusesSysVIPC: System V shared memory, semaphores and
// message queues cannot be made in the sandbox (they would outlive their
// processes, outside the memory bound); POSIX shared memory, a file of
// /dev/shm, can.
func TestSandboxRefusesSysVIPC(t *testing.T) {
	s, _ := need(t)
	python := usrPython(t)
	py := `import ctypes, os
from multiprocessing import shared_memory
libc = ctypes.CDLL(None, use_errno=True)
for name, call in (("shmget", lambda: libc.shmget(0, 1 << 20, 0o1600)), ("semget", lambda: libc.semget(0, 1, 0o1600)), ("msgget", lambda: libc.msgget(0, 0o1600))):
    ctypes.set_errno(0)
    r = call()
    print(name, r, ctypes.get_errno())
m = shared_memory.SharedMemory(create=True, size=1 << 20)
print("posix shm", m.size >= 1 << 20)
m.close(); m.unlink()`
	c := s.Command(t.Context(), Spec{Args: []string{python, "-c", py}})
	var stdout, stderr bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &stdout, &stderr
	err := c.Run()
	got := stdout.String() + stderr.String()
	for _, want := range []string{"shmget -1 1\n", "semget -1 1\n", "msgget -1 1\n", "posix shm True\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q: %q (%v)", want, got, err)
		}
	}
}

// usrPython is the distribution's python3, which the sandbox shows with
// /usr (a python3 of the user's own, under the home, it does not).
func usrPython(t *testing.T) string {
	t.Helper()
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		testenv.Missing(t, "%s, which the sandbox shows, runs the test program: %v (apt-get install -y python3)", python, err)
	}
	return python
}
