package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/agentconfig"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// localRunner runs the local commands a config names (node ./server.js,
// a binary in the repository) in the sandbox, never on the host: the
// sandbox shows the host's /usr, the command's own folder read-only and
// nothing else of the host, and has no network.
type localRunner struct {
	// Skip is --no-local: local commands are listed, not run.
	Skip bool
	// Repo is the repository scanned: a project config's command runs
	// from its root, as the clients run it from the workspace.
	Repo string
	// Home is the user's home folder, never shown whole.
	Home   string
	Limits sandbox.Limits

	once sync.Once
	sb   *sandbox.Sandbox
	err  error
}

// sandbox finds the sandbox once, when the first local command needs it.
func (l *localRunner) sandbox(ctx context.Context) (*sandbox.Sandbox, error) {
	l.once.Do(func() { l.sb, l.err = sandbox.Find(ctx) })
	return l.sb, l.err
}

// hostSystem are the host folders every sandbox shows (its /usr and the
// links into it): a program there needs no mount of its own.
var hostSystem = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64"}

func within(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// spec is the sandbox of one local command: its folder mounted read-only
// at its own path and made the working folder; a program outside that
// folder and the host's system folders mounted alone, read-only; the
// config's env (resolved) for the server. Its folder is the cwd the config
// gives, else the repository's root for a project config (the clients run
// those from the workspace), else the folder of the script or program the
// command names by absolute path (a user-wide config: never the config's
// own folder, which holds other servers' secrets), else none.
func (l *localRunner) spec(full agentconfig.Server) (sandbox.Spec, error) {
	dir := ""
	switch {
	case full.Cwd != "" && filepath.IsAbs(full.Cwd):
		dir = full.Cwd
	case full.Cwd != "":
		dir = filepath.Join(filepath.Dir(full.File), full.Cwd)
	case l.Repo != "" && within(l.Repo, full.File) && !sameDir(l.Repo, l.Home):
		// (A "project" that is the home folder is no project: showing it
		// would show everything.)
		dir = l.Repo
	}
	prog := full.Command
	var err error
	if strings.ContainsRune(prog, filepath.Separator) {
		if !filepath.IsAbs(prog) {
			if dir == "" {
				return sandbox.Spec{}, fmt.Errorf("%s: a relative command in a user-wide config, with no cwd", full.Command)
			}
			prog = filepath.Join(dir, prog)
		}
	} else if prog, err = exec.LookPath(prog); err != nil {
		return sandbox.Spec{}, fmt.Errorf("%s is not on this machine's PATH", full.Command)
	}
	if p, err := filepath.EvalSymlinks(prog); err == nil {
		prog = p
	}
	if dir == "" {
		for _, p := range append(slices.Clone(full.Args), prog) {
			if fi, err := os.Stat(p); err == nil && filepath.IsAbs(p) && fi.Mode().IsRegular() && !systemPath(p) {
				dir = filepath.Dir(p)
				break
			}
		}
	}
	spec := sandbox.Spec{Args: append([]string{prog}, full.Args...), Limits: l.Limits}
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return sandbox.Spec{}, err
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return sandbox.Spec{}, fmt.Errorf("the command's folder %s is not there", dir)
		}
		spec.Dir = dir
		spec.Mounts = append(spec.Mounts, sandbox.Mount{Host: dir, Sandbox: dir})
	}
	if !systemPath(prog) && (dir == "" || !within(dir, prog)) {
		spec.Mounts = append(spec.Mounts, sandbox.Mount{Host: prog, Sandbox: prog})
	}
	keys := make([]string, 0, len(full.Env))
	for k := range full.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		spec.Env = append(spec.Env, k+"="+full.Env[k])
	}
	return spec, nil
}

// systemPath says p lies in the host folders every sandbox shows.
func systemPath(p string) bool {
	for _, d := range hostSystem {
		if within(d, p) {
			return true
		}
	}
	return false
}

// scan runs the command of full in the sandbox and lists its tools. The
// error is why it could not be started at all (no sandbox on this
// machine, a command that is not there).
func (l *localRunner) scan(ctx context.Context, full agentconfig.Server, po probe.Options) (probe.Result, error) {
	spec, err := l.spec(full)
	if err != nil {
		return probe.Result{}, err
	}
	sb, err := l.sandbox(ctx)
	if err != nil {
		return probe.Result{}, errors.New("no sandbox to run it in: " + err.Error())
	}
	return runners.ScanCommand(ctx, sb, spec, po), nil
}

// sameDir says a and b name one folder.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
