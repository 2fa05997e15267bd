package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// need returns a working sandbox and node, or skips (fails with CI=true).
func need(t *testing.T) (*Sandbox, string) {
	t.Helper()
	testenv.Need(t, "bwrap", "the sandbox; apt-get install -y bubblewrap")
	node := testenv.Need(t, "node", "the runtime of the test programs")
	s, err := Find(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s, node
}

// probeJS tries what a hostile program would and prints one line a try.
const probeJS = `
const fs = require("fs"), net = require("net"), cp = require("child_process");
const out = [];
const tryit = (name, f) => { try { f(); out.push(name + " ok"); } catch (e) { out.push(name + " " + (e.code || e.message)); } };
tryit("read-secret", () => fs.readFileSync(process.argv[2]));
tryit("write-outside", () => fs.writeFileSync("/pkg/x", "1"));
tryit("write-home", () => fs.writeFileSync(process.env.HOME + "/x", "1"));
out.push("env " + Object.keys(process.env).sort().join(","));
out.push("uid " + process.getuid());
// A child that outlives its parent, detached in a session of its own.
cp.spawn(process.execPath, ["-e", "setInterval(() => {}, 1000) /* sandbox-test-orphan */"], {detached: true, stdio: "ignore"}).unref();
const s = net.connect({host: "1.1.1.1", port: 80});
s.on("connect", () => { out.push("net ok"); done(); });
s.on("error", (e) => { out.push("net " + e.code); done(); });
function done() { console.log(out.join("\n")); process.exit(0); }
`

func TestSandboxConfines(t *testing.T) {
	s, node := need(t)
	pkg := t.TempDir()
	if err := os.WriteFile(filepath.Join(pkg, "p.js"), []byte(probeJS), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SANDBOX_TEST_SECRET", "leak")
	uid := SlotUID(7)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := s.Command(ctx, Spec{Args: []string{node, "/pkg/p.js", secret}, Mounts: []Mount{{pkg, "/pkg"}}, UID: uid})
	var stdout, stderr bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		"read-secret ENOENT", "write-outside EROFS", "write-home ok",
		"env HOME,PATH,PWD\n", fmt.Sprintf("uid %d", uid), "net ENETUNREACH",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in the output:\n%s", want, got)
		}
	}
	if left := ProcessesOf(uid); len(left) > 0 {
		t.Errorf("processes of the sandbox left behind: %v", left)
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
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := s.Command(ctx, Spec{Args: []string{node, "-e", tc.js}, Limits: tc.limits})
			var stdout bytes.Buffer
			c.Cmd.Stdout = &stdout
			_ = c.Run() // the file size signal may end it
			if !strings.Contains(stdout.String(), tc.want) {
				t.Errorf("got %q, want %q", stdout.String(), tc.want)
			}
		})
	}
}

// TestSandboxKilledOnCancel: a program that never ends is killed, with its
// children, when the context ends.
func TestSandboxKilledOnCancel(t *testing.T) {
	s, node := need(t)
	uid := SlotUID(8)
	ctx, cancel := context.WithCancel(context.Background())
	c := s.Command(ctx, Spec{Args: []string{node, "-e",
		`require("child_process").spawn(process.execPath,["-e","setInterval(()=>{},1000)"],{detached:true,stdio:"ignore"});console.log("up");setInterval(()=>{},1000)`}, UID: uid})
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
	if left := ProcessesOf(uid); len(left) > 0 {
		t.Errorf("processes of the sandbox left behind: %v", left)
	}
}
