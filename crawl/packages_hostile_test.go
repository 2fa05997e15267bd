package crawl

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// evilSO is a preload library: in every process that loads it, it leaves
// /tmp/atlas-evil-TOKEN-COMM holding the process's effective capabilities
// (inside a sandbox, in its private /tmp; in a helper on the host, in the
// host's).
const evilSO = `
#include <stdio.h>
#include <string.h>
__attribute__((constructor)) static void evil(void) {
  char comm[64] = "", line[256], cap[64] = "?", mark[256];
  FILE *f = fopen("/proc/self/comm", "r"); if (f) { fscanf(f, "%%63s", comm); fclose(f); }
  f = fopen("/proc/self/status", "r");
  if (f) { while (fgets(line, sizeof line, f)) if (!strncmp(line, "CapEff:", 7)) sscanf(line + 7, "%%63s", cap); fclose(f); }
  snprintf(mark, sizeof mark, "/tmp/atlas-evil-%s-%%s", comm);
  f = fopen(mark, "w"); if (f) { fputs(cap, f); fclose(f); }
}
`

// TestPackagesHostile: what a hostile package or entry tried against the
// crawl fails: a loader variable of the entry reaches only the server,
// which runs with no capability; set-id bits are not kept; git, URL and
// file dependencies are never fetched; a tarball bomb stops at the
// package bound; six children cannot pass the sandbox's memory bound
// together (the sandbox's own test runs children of 900 MB).
func TestPackagesHostile(t *testing.T) {
	npmtest.NeedSandbox(t)
	cc := testenv.Need(t, "cc", "a C compiler builds the hostile preload library; apt-get install -y gcc")
	token := fmt.Sprintf("t%d", os.Getpid())
	dir := t.TempDir()
	src := filepath.Join(dir, "evil.c")
	if err := os.WriteFile(src, []byte(fmt.Sprintf(evilSO, token)), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "evil.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v: %s", err, out)
	}
	soBytes, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		left, _ := filepath.Glob("/tmp/atlas-evil-" + token + "-*")
		for _, f := range left {
			os.Remove(f)
		}
	})
	var otherHost atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHost.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(other.Close)
	repo := filepath.Join(dir, "repo.git")

	const packageMax = 32 << 20
	const memory = 1 << 30
	pkgs := []npmtest.Package{
		{Name: "tiny-preload", Version: "1.0.0", Files: []npmtest.File{{Name: "evil.so", Body: soBytes, Mode: 0o755}},
			Prelude: `const fs = require("fs");
for (const n of fs.readdirSync("/tmp").filter((n) => n.startsWith("atlas-evil-")).sort()) notes.push("evil_" + n.split("-").pop() + "_" + fs.readFileSync("/tmp/" + n, "utf8"));
serve();`},
		{Name: "tiny-suid", Version: "1.0.0", Prelude: `serve();`, Files: []npmtest.File{
			{Name: "suid.bin", Body: []byte("#!/bin/sh\n"), Mode: 0o4755}, {Name: "sgid", Dir: true, Mode: 0o2777}, {Name: "sgid/x", Body: []byte("x"), Mode: 0o2666}}},
		{Name: "tiny-gitdep", Version: "1.0.0", Prelude: `serve();`, Dependencies: map[string]string{"evil": "git+file://" + repo}},
		{Name: "tiny-githubdep", Version: "1.0.0", Prelude: `serve();`, Dependencies: map[string]string{"evil": "github:evil/evil"}},
		{Name: "tiny-urldep", Version: "1.0.0", Prelude: `serve();`, Dependencies: map[string]string{"evil": other.URL + "/evil.tgz"}},
		{Name: "tiny-bomb", Version: "1.0.0", Prelude: `serve();`, Files: []npmtest.File{{Name: "bomb", Size: 1 << 30, Mode: 0o644}}},
		{Name: "tiny-memory", Version: "1.0.0", Prelude: `const cp = require("child_process");
for (let i = 0; i < 6; i++) cp.spawn(process.execPath, ["-e", "const b = Buffer.alloc(300 * 1024 * 1024, 1); setInterval(() => { b[0]++ }, 1000)"], {stdio: "ignore"});`},
	}
	npmURL, _ := npmtest.Registry(t, pkgs)
	npmtest.Use(t, npmURL)
	preload := "/pkg/node_modules/tiny-preload/evil.so"
	var lines []string
	for _, p := range pkgs {
		pkg := &runners.Package{RegistryType: runners.RegistryNPM, Identifier: p.Name, Version: p.Version, Transport: probe.TransportStdio}
		if p.Name == "tiny-preload" {
			pkg.Env = []runners.EnvVar{{Name: "LD_PRELOAD", Default: &preload}}
		}
		lines = append(lines, string(runners.PackageRecord(pkg, "https://r", "io.test/"+p.Name, "1.0")))
	}
	cands, err := ParseCandidates(strings.NewReader(strings.Join(lines, "\n")+"\n"), "list")
	if err != nil {
		t.Fatal(err)
	}
	cache := crawltest.CacheDir(t)
	opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
		// The memory bomb never answers: the deadline leaves it time to
		// reach the bound on a busy machine.
		Probe:    probe.Options{Timeout: time.Minute, MaxBytes: 4 << 20},
		Packages: runners.Options{Cache: cache, PackageMax: packageMax, Limits: sandbox.Limits{Memory: memory}}}
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	servers := readServers(t, opt.Out)
	for id, s := range servers {
		t.Logf("%s: reachable %v, %s: %s", id, s.Reachable, s.ErrorKind, s.Error)
	}
	kinds := map[string]string{
		"tiny-gitdep": probe.KindInstall, "tiny-githubdep": probe.KindInstall, "tiny-urldep": probe.KindInstall, "tiny-bomb": probe.KindInstall, "tiny-memory": probe.KindMemory,
	}
	for name, kind := range kinds {
		if s := servers["npm:"+name+"@1.0.0"]; s.Reachable || s.ErrorKind != kind {
			t.Errorf("%s: reachable %v, %s (%s); want %s", name, s.Reachable, s.ErrorKind, s.Error, kind)
		}
	}
	if s := servers["npm:tiny-urldep@1.0.0"]; !strings.Contains(s.Error, "refused") {
		t.Errorf("tiny-urldep: %s; want the proxy's refusal named", s.Error)
	}
	if n := otherHost.Load(); n != 0 {
		t.Errorf("an install fetched %d times from a host other than the npm registry", n)
	}
	if s := servers["npm:tiny-suid@1.0.0"]; !s.Reachable {
		t.Errorf("tiny-suid: %s: %s", s.ErrorKind, s.Error)
	}
	// The entry's LD_PRELOAD loaded into the server alone (node), which
	// held no capability; no helper on the host loaded it.
	if s := servers["npm:tiny-preload@1.0.0"]; !s.Reachable || strings.Join(s.tools[3:], ",") != "evil_node_0000000000000000" {
		t.Errorf("tiny-preload: reachable %v, tools %v (%s); want only evil_node_0000000000000000 beyond the three", s.Reachable, s.tools, s.Error)
	}
	if left, _ := filepath.Glob("/tmp/atlas-evil-" + token + "-*"); len(left) > 0 {
		t.Errorf("the entry's LD_PRELOAD ran on the host: %v", left)
	}
	// No set-id bit kept; the cache is private to its user; the bomb left
	// less than the package bound on disk.
	var size int64
	err = filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		size += info.Size()
		if info.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 || (d.Type()&fs.ModeSymlink == 0 && info.Mode().Perm()&0o002 != 0) {
			t.Errorf("%s: mode %v", p, info.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the package cache holds %d bytes after the tarball bomb (a 1 GiB file, package bound %d)", size, packageMax)
	if size > packageMax {
		t.Errorf("the cache holds %d bytes after a tarball bomb, more than the package bound %d", size, packageMax)
	}
	for _, d := range []string{cache, filepath.Join(cache, ".npm")} {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want mode 0700", d, st.Mode(), err)
		}
	}
}

// TestPackagesShareDownloads: two packages of one dependency fetch it
// once: npm's download cache is shared by the installs of a crawl.
func TestPackagesShareDownloads(t *testing.T) {
	npmtest.NeedSandbox(t)
	pkgs := []npmtest.Package{
		{Name: "tiny-shared", Version: "1.0.0", Prelude: `serve();`},
		{Name: "tiny-a", Version: "1.0.0", Prelude: `serve();`, Dependencies: map[string]string{"tiny-shared": "^1.0.0"}},
		{Name: "tiny-b", Version: "1.0.0", Prelude: `serve();`, Dependencies: map[string]string{"tiny-shared": "1.0.0"}},
	}
	npmURL, fetched := npmtest.Registry(t, pkgs)
	npmtest.Use(t, npmURL)
	cands, err := ParseCandidates(strings.NewReader("npm:tiny-a@1.0.0\nnpm:tiny-b@1.0.0\n"), "list")
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
		Probe: probe.Options{Timeout: crawlTimeout}, Packages: runners.Options{Cache: crawltest.CacheDir(t), Concurrency: 1}}
	sum, err := Run(context.Background(), opt)
	if err != nil || sum.Reachable != 2 {
		t.Fatalf("%+v, %v", sum, err)
	}
	if n := fetched.Load(); n != 3 {
		t.Errorf("%d tarballs fetched for tiny-a, tiny-b and their one dependency; want 3", n)
	}
}
