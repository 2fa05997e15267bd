package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// need returns a working sandbox and node, or skips (fails with CI=true);
// where user namespaces are forbidden, the skip names the setting.
func need(t *testing.T) (*Sandbox, string) {
	t.Helper()
	testenv.Need(t, "bwrap", "the sandbox; apt-get install -y bubblewrap")
	node := testenv.Need(t, "node", "the runtime of the test programs")
	s, err := Find(context.Background())
	if err != nil {
		testenv.Missing(t, "no working sandbox: %v", err)
	}
	return s, node
}

// openDir is a temporary folder the sandbox's user can read (a test run
// as root makes its folders 0700).
func openDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// writableDir is a temporary folder the sandbox's user may write.
func writableDir(t *testing.T, s *Sandbox) string {
	t.Helper()
	d := openDir(t)
	if err := os.Chown(d, s.HostUID(), s.HostUID()); err != nil && os.Geteuid() == 0 {
		t.Fatal(err)
	}
	return d
}

// probeJS tries what a hostile program would and prints one line a try.
const probeJS = `
const fs = require("fs"), net = require("net"), cp = require("child_process");
const out = [];
const tryit = (name, f) => { try { f(); out.push(name + " ok"); } catch (e) { out.push(name + " " + (e.code || e.message)); } };
tryit("read-secret", () => fs.readFileSync(process.argv[2]));
tryit("write-outside", () => fs.writeFileSync("/pkg/x", "1"));
tryit("write-home", () => fs.writeFileSync(process.env.HOME + "/x", "1"));
tryit("write-root", () => fs.writeFileSync("/x", "1"));
tryit("write-dev", () => fs.writeFileSync("/dev/x", "1"));
tryit("write-shm", () => fs.writeFileSync("/dev/shm/x", "1"));
out.push("init-cmdline " + fs.readFileSync("/proc/1/cmdline", "utf8").split("\0").join(" "));
out.push("env " + Object.keys(process.env).sort().join(","));
out.push("uid " + process.getuid());
out.push("hostname " + require("os").hostname());
const st = fs.readFileSync("/proc/self/status", "utf8");
out.push("capeff " + /CapEff:\s*(\S+)/.exec(st)[1]);
tryit("write-out", () => fs.writeFileSync("/out/made", "1"));
const r = cp.spawnSync("/usr/bin/unshare", ["-U", "/bin/true"]);
out.push("nested-userns " + (r.status === 0 ? "ok" : "refused"));
// A child that outlives its parent, detached in a session of its own.
cp.spawn(process.execPath, ["-e", "setInterval(() => {}, 1000) /* sandbox-test-orphan */"], {detached: true, stdio: "ignore"}).unref();
const s = net.connect({host: "1.1.1.1", port: 80});
s.on("connect", () => { out.push("net ok"); done(); });
s.on("error", (e) => { out.push("net " + e.code); done(); });
function done() { console.log(out.join("\n")); process.exit(0); }
`

func TestSandboxConfines(t *testing.T) {
	s, node := need(t)
	pkg := openDir(t)
	if err := os.WriteFile(filepath.Join(pkg, "p.js"), []byte(probeJS), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SANDBOX_TEST_SECRET", "leak")
	out := writableDir(t, s)
	c := s.Command(t.Context(), Spec{Args: []string{node, "/pkg/p.js", secret},
		Mounts: []Mount{{Host: pkg, Sandbox: "/pkg"}, {Host: out, Sandbox: "/out", Writable: true}}})
	var stdout, stderr bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		"read-secret ENOENT", "write-outside EROFS", "write-home ok",
		"write-root EROFS", "write-dev EROFS", "write-shm ok", "hostname " + Hostname + "\n",
		"env HOME,PATH,PWD\n", // bwrap sets PWD fmt.Sprintf("uid %d", UID), "net ENETUNREACH",
		"capeff 0000000000000000", "write-out ok",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in the output:\n%s", want, got)
		}
	}
	// bwrap's command line, the init's, names no folder of the host.
	if i := strings.Index(got, "init-cmdline "); i < 0 {
		t.Error("no init-cmdline line")
	} else if line, _, _ := strings.Cut(got[i:], "\n"); strings.Contains(line, pkg) || strings.Contains(line, out) {
		t.Errorf("the sandbox reads host folders on its init's command line: %q", line)
	}
	// What the program makes is owned, on the host, by its host user.
	if st, err := os.Stat(filepath.Join(out, "made")); err != nil {
		t.Error(err)
	} else if uid := int(st.Sys().(*syscall.Stat_t).Uid); uid != s.HostUID() || uid == 0 {
		t.Errorf("the program ran as host uid %d, want %d (never 0)", uid, s.HostUID())
	}
	if s.disableUserns && !strings.Contains(got, "nested-userns refused") {
		t.Errorf("a nested user namespace was made:\n%s", got)
	}
	assertGone(t, c)
}

// assertGone fails when a process of the sandbox is still alive.
func assertGone(t *testing.T, c *Cmd) {
	t.Helper()
	if len(c.Processes()) == 0 {
		t.Error("the watch saw no process of the sandbox")
	}
	for _, p := range c.Processes() {
		if err := syscall.Kill(p, 0); err == nil {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
			if !strings.Contains(string(b), ") Z ") {
				t.Errorf("process %d of the sandbox left behind: %s", p, b)
			}
		}
	}
}

func TestSandboxLimits(t *testing.T) {
	s, node := need(t)
	tests := []struct {
		name   string
		js     string
		limits Limits
		want   string
	}{
		{"processes", `const cp=require("child_process");let failed=0;for(let n=0;n<100;n++){try{cp.spawn("/usr/bin/sleep",["5"]).on("error",()=>{failed++})}catch(e){failed++}};setTimeout(()=>{console.log(failed>0?"capped":"free");process.exit(0)},200)`,
			Limits{Procs: 12}, "capped"},
		{"file size", `try{require("fs").writeFileSync(process.env.HOME+"/big",Buffer.alloc(2<<20));console.log("free")}catch(e){console.log("capped "+e.code)}`,
			Limits{FileSize: 1 << 20}, "capped"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := s.Command(t.Context(), Spec{Args: []string{node, "-e", tc.js}, Limits: tc.limits})
			var stdout bytes.Buffer
			c.Cmd.Stdout = &stdout
			_ = c.Run() // the file size signal may end it
			if !strings.Contains(stdout.String(), tc.want) {
				t.Errorf("got %q, want %q", stdout.String(), tc.want)
			}
		})
	}
}

// TestSandboxMemoryBound: six children of 900 MB each, every one within
// the address space allowed a process, cannot hold more than the bound of
// the whole sandbox together: the sandbox is killed.
func TestSandboxMemoryBound(t *testing.T) {
	s, node := need(t)
	const bound = 2 << 30
	js := `const cp=require("child_process");let n=0;
for(let i=0;i<6;i++){const c=cp.spawn(process.execPath,["-e","const b=Buffer.alloc(900*1024*1024,1);console.log('held');setInterval(()=>{b[0]++},1000)"],{stdio:["ignore","pipe","inherit"]});
c.stdout.on("data",()=>{if(++n===6)console.log("all six hold 5400 MB")})}
setInterval(()=>{},1000)`
	c := s.Command(t.Context(), Spec{Args: []string{node, "-e", js}, Limits: Limits{Memory: bound}})
	var stdout bytes.Buffer
	c.Cmd.Stdout = &stdout
	err := c.Run()
	if !errors.Is(err, ErrMemory) || !c.MemoryExceeded() {
		t.Fatalf("err %v, want ErrMemory; output %q", err, stdout.String())
	}
	if strings.Contains(stdout.String(), "all six") {
		t.Errorf("the children together held more than the bound: %q", stdout.String())
	}
	t.Logf("peak resident memory seen: %d MiB (bound %d MiB)", c.PeakMemory()>>20, bound>>20)
	assertGone(t, c)
}

// TestSandboxKilledOnCancel: a program that never ends is killed, with its
// children, when the context ends.
func TestSandboxKilledOnCancel(t *testing.T) {
	s, node := need(t)
	ctx, cancel := context.WithCancel(t.Context())
	c := s.Command(ctx, Spec{Args: []string{node, "-e",
		`require("child_process").spawn(process.execPath,["-e","setInterval(()=>{},1000)"],{detached:true,stdio:"ignore"});console.log("up");setInterval(()=>{},1000)`}})
	r, err := c.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := r.Read(buf); err != nil || string(buf) != "up\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
	cancel()
	if err := c.Wait(); err == nil {
		t.Error("a killed program reported success")
	}
	assertGone(t, c)
}

// TestSandboxSparesHostProcesses: processes of the host running as the
// sandbox's host user, or as an id a sandbox of an earlier version ran
// as, survive a sandbox whose orphans are killed.
func TestSandboxSparesHostProcesses(t *testing.T) {
	s, node := need(t)
	uids := []int{s.HostUID()}
	if os.Geteuid() == 0 {
		uids = append(uids, 100000+(os.Getpid()%10000)*64)
	}
	var hosts []*exec.Cmd
	for _, uid := range uids {
		h := exec.Command("sleep", "600")
		if uid != os.Getuid() {
			h = exec.Command("setpriv", "--reuid="+strconv.Itoa(uid), "--regid="+strconv.Itoa(uid), "--clear-groups", "sleep", "600")
		}
		if err := h.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Process.Kill(); _ = h.Wait() })
		hosts = append(hosts, h)
	}
	c := s.Command(t.Context(), Spec{Args: []string{node, "-e",
		`require("child_process").spawn("/usr/bin/sleep",["600"],{detached:true,stdio:"ignore"}).unref();setTimeout(()=>{},300)`}})
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, c)
	for i, h := range hosts {
		if err := h.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("the host process of uid %d was touched: %v", uids[i], err)
		}
	}
}

// TestSandboxEnvReachesOnlyProgram: a loader variable of the program's
// environment (a hostile LD_PRELOAD in the sandboxed folder) loads into
// the program alone, never into bwrap, setpriv, prlimit or env, and the
// program runs with no capability as an unprivileged host user.
func TestSandboxEnvReachesOnlyProgram(t *testing.T) {
	s, _ := need(t)
	cc := testenv.Need(t, "cc", "a C compiler builds the hostile preload library; apt-get install -y gcc")
	dir := openDir(t)
	src := filepath.Join(dir, "evil.c")
	if err := os.WriteFile(src, []byte(evilC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(dir, "evil.so"), src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v: %s", err, out)
	}
	for _, v := range []string{"LD_PRELOAD", "LD_AUDIT"} {
		t.Run(v, func(t *testing.T) {
			out := writableDir(t, s)
			c := s.Command(t.Context(), Spec{Args: []string{"/usr/bin/true"}, Env: []string{v + "=/pkg/evil.so"},
				Mounts: []Mount{{Host: dir, Sandbox: "/pkg"}, {Host: out, Sandbox: "/out", Writable: true}}})
			var stderr bytes.Buffer
			c.Cmd.Stderr = &stderr
			_ = c.Run()
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			var loaded []string
			for _, l := range lines {
				if strings.HasPrefix(l, "EVIL ") {
					loaded = append(loaded, l)
				}
			}
			if v == "LD_PRELOAD" && len(loaded) == 0 {
				t.Fatalf("the library never loaded into the program (the test proves nothing): %q", stderr.String())
			}
			for _, l := range loaded {
				f := strings.Fields(l) // EVIL comm capeff
				if len(f) != 3 || f[1] != "true" || f[2] != "0000000000000000" {
					t.Errorf("the library ran outside the program or privileged: %q", l)
				}
			}
			// Each process that loaded it left a file, owned on the
			// host by the user it ran as.
			ents, _ := os.ReadDir(out)
			if len(ents) != len(loaded) {
				t.Errorf("%d marks for %d loads", len(ents), len(loaded))
			}
			for _, e := range ents {
				info, _ := e.Info()
				if uid := int(info.Sys().(*syscall.Stat_t).Uid); uid == 0 || uid != s.HostUID() {
					t.Errorf("%s: the library ran as host uid %d", e.Name(), uid)
				}
			}
		})
	}
}

// evilC prints, in every process that loads it, the process's name and
// effective capabilities, and leaves a file in /out (its owner on the host
// is the user the process ran as).
const evilC = `
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void) {
  char comm[64] = "", line[256], cap[64] = "?", mark[128];
  FILE *f = fopen("/proc/self/comm", "r"); if (f) { fscanf(f, "%63s", comm); fclose(f); }
  f = fopen("/proc/self/status", "r");
  if (f) { while (fgets(line, sizeof line, f)) if (!strncmp(line, "CapEff:", 7)) sscanf(line + 7, "%63s", cap); fclose(f); }
  snprintf(mark, sizeof mark, "/out/%s-%d", comm, (int)getpid());
  f = fopen(mark, "w"); if (f) fclose(f);
  fprintf(stderr, "EVIL %s %s\n", comm, cap);
}
unsigned la_version(unsigned v) { return v; }
`

func TestSandboxRefusesBadEnv(t *testing.T) {
	s, _ := need(t)
	for _, kv := range []string{"A-B=1", "=x", "X", "--x=1"} {
		c := s.Command(t.Context(), Spec{Args: []string{"/usr/bin/true"}, Env: []string{kv}})
		if err := c.Run(); err == nil || !strings.Contains(err.Error(), "environment variable") {
			t.Errorf("%q: err %v, want a refusal", kv, err)
		}
	}
}
