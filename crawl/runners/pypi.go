package runners

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/outtext"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// DefaultPyPIIndex is the index pip uses when nothing configures one.
const DefaultPyPIIndex = "https://pypi.org/simple"

// pypiRunner installs PyPI packages, wheels only, into a venv of the
// machine's python3 in the install sandbox, and runs them in the run
// sandbox. The venv lives at the same path in both (pypiMount), so that
// its scripts' absolute paths hold.
type pypiRunner struct {
	index string
	prx   *sandbox.Proxy
}

// pythonRuntime is the python3 that PyPI packages' venvs and python
// bundles run with.
type pythonRuntime struct {
	python string // the interpreter the sandbox user can run
	mounts []sandbox.Mount
	no     string // why no python3 runs here, or ""
}

func (*pypiRunner) pinned() bool            { return false }
func (*pypiRunner) check(*Package) string   { return "" }
func (*pypiRunner) find() string            { return "" }
func (r *pypiRunner) proxy() *sandbox.Proxy { return r.prx }

// findPython finds the python3 the sandbox's user can run, once.
func (pr *Set) findPython(ctx context.Context) *pythonRuntime {
	if pr.python == nil {
		py := &pythonRuntime{}
		py.python, py.mounts, py.no = findPython(ctx, pr.sb.HostUID())
		pr.python = py
	}
	return pr.python
}

// pypiMount is where a package's venv folder is, installing and running.
const pypiMount = "/pypkg"

// pypiName is a PyPI project name (PEP 508) and pypiVersion an exact
// version (PEP 440, no range, no local path or URL).
var (
	pypiName    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	pypiVersion = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$`)
)

// findPython picks the python3 the sandbox's user can run: one under
// /usr (shown in every sandbox), or another whose installation that user
// can reach (shown read-only at its path). A python3 under a home closed
// to others (pyenv's under /root) is passed over, and said so.
func findPython(ctx context.Context, uid int) (string, []sandbox.Mount, string) {
	var notes []string
	var cands []string
	if p, err := exec.LookPath("python3"); err == nil {
		// A shim (pyenv's) is a script: ask the interpreter itself.
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		out, err := exec.CommandContext(cctx, p, "-c", "import sys; print(sys.executable)").Output()
		cancel()
		if err == nil {
			cands = append(cands, strings.TrimSpace(string(out)))
		}
	}
	cands = append(cands, "/usr/bin/python3")
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		if strings.HasPrefix(real, "/usr/") {
			return real, nil, ""
		}
		prefix := filepath.Dir(filepath.Dir(real))
		if err := reachable(filepath.Join(prefix, "bin"), uid); err != nil {
			notes = append(notes, fmt.Sprintf("%s is not readable by the sandbox's user (%v)", real, err))
			continue
		}
		return real, []sandbox.Mount{{Host: prefix, Sandbox: prefix}}, ""
	}
	if len(notes) == 0 {
		notes = append(notes, "no python3 on this machine")
	}
	return "", nil, "PyPI packages need a python3 the sandbox can run: " + strings.Join(notes, "; ")
}

// pipIndex is the index pip is configured with: PIP_INDEX_URL, or the
// index-url of the pip.conf files pip reads, or PyPI.
func pipIndex() string {
	if u := os.Getenv("PIP_INDEX_URL"); u != "" {
		return u
	}
	var files []string
	if f := os.Getenv("PIP_CONFIG_FILE"); f != "" {
		files = append(files, f)
	} else {
		files = append(files, "/etc/pip.conf")
		if h, err := os.UserHomeDir(); err == nil {
			files = append(files, filepath.Join(h, ".pip", "pip.conf"), filepath.Join(h, ".config", "pip", "pip.conf"))
		}
		if v := os.Getenv("VIRTUAL_ENV"); v != "" {
			files = append(files, filepath.Join(v, "pip.conf"))
		}
	}
	index := DefaultPyPIIndex
	for _, f := range files { // later files override earlier ones, as in pip
		if u := confIndex(f); u != "" {
			index = u
		}
	}
	return index
}

// confIndex is the index-url of a pip.conf's [global] or [install]
// section.
func confIndex(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	var section, out string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			section = strings.ToLower(l[1 : len(l)-1])
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if ok && (section == "global" || section == "install") && strings.TrimSpace(strings.ReplaceAll(k, "_", "-")) == "index-url" {
			out = strings.TrimSpace(v)
		}
	}
	return out
}

// prepare readies the PyPI runner: the python3, the index and its
// proxy. What is missing is recorded on each PyPI package.
func (r *pypiRunner) prepare(ctx context.Context, s *Set) error {
	if s.findPython(ctx).no != "" {
		return nil
	}
	r.index = pipIndex()
	allow := []string{r.index}
	if strings.Contains(r.index, "://pypi.org/") {
		// PyPI's files live on their own host.
		allow = append(allow, "https://files.pythonhosted.org")
	}
	p, err := sandbox.NewProxy(allow...)
	if err != nil {
		return fmt.Errorf("pip index %q: %w", r.index, err)
	}
	r.prx = p
	return nil
}

// run installs pkg (once, into the cache) and runs its console script,
// or its module, in the run sandbox.
func (r *pypiRunner) run(ctx context.Context, pr *Set, pkg *Package) probe.Result {
	py := pr.python
	if py == nil || py.no != "" {
		why := "no PyPI runner"
		if py != nil {
			why = py.no
		}
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindNoRuntime, Error: why}
	}
	if !pypiName.MatchString(pkg.Identifier) || len(pkg.Identifier) > 200 {
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindInstall, Error: fmt.Sprintf("%q is not a PyPI project name", pkg.Identifier)}
	}
	if !pypiVersion.MatchString(pkg.Version) {
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindInstall, Error: fmt.Sprintf("%q is not an exact PyPI version", pkg.Version)}
	}
	h := sha256.Sum256([]byte(strings.ToLower(pkg.Identifier) + "==" + pkg.Version + " " + py.python + " " + r.index))
	key := "pypi-" + hex.EncodeToString(h[:12])
	in, err := pr.cache.acquireDir(ctx, key, func(ctx context.Context, tmp string) (string, error) {
		return r.install(ctx, pr, pkg, tmp)
	})
	if err != nil {
		return acquireError(ctx, err)
	}
	defer pr.cache.release(in.key)
	venv := path.Join(pypiMount, "venv")
	argv := []string{path.Join(venv, "bin", "python")}
	if mod := pypiModule(pkg); mod != "" {
		// The entry says which module runs (runtimeHint python, -m).
		argv = append(argv, "-m", mod)
	} else if mod, ok := strings.CutPrefix(in.main, "-m "); ok && pyModule.MatchString(mod) {
		argv = append(argv, "-m", mod)
	} else if err := plainScriptName(in.main); err == nil {
		argv = append(argv, path.Join(venv, "bin", in.main))
	} else {
		// The mark of a folder installed before the name was checked.
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindInstall, Error: err.Error()}
	}
	argv = append(argv, packageArgs(pkg)...)
	env := append(packageEnv(pkg), "VIRTUAL_ENV="+venv, "PATH="+path.Join(venv, "bin")+":/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1")
	spec := sandbox.Spec{Args: argv, Env: imageEnv(nil, env), Limits: pr.limits,
		Mounts: append([]sandbox.Mount{{Host: in.dir, Sandbox: pypiMount}}, py.mounts...)}
	return pr.runServer(ctx, in, spec, &probe.RunnerInfo{Runner: RegistryPyPI, Argv: argv, Resolved: pkg.Identifier + "==" + pkg.Version}, pkg)
}

// install makes a venv of the python3 and has its pip install the
// package's wheels (and its dependencies') from the index, in the install
// sandbox: no sdist is built, since building runs the package's code.
// It returns the console script to run, or "-m MODULE".
func (r *pypiRunner) install(ctx context.Context, pr *Set, pkg *Package, out string) (string, error) {
	py := pr.python
	c := pr.cache
	if err := c.own(out); err != nil {
		return "", err
	}
	venv := path.Join(pypiMount, "venv")
	script := `"$1" -m venv "$2" && shift 2 && "$@" && cp -R ` + venv + ` /out/`
	args := []string{"/bin/sh", "-c", script, "sh", py.python, venv, path.Join(venv, "bin", "python"), "-m", "pip", "install",
		"--only-binary=:all:", "--no-cache-dir", "--no-input", "--disable-pip-version-check", "--no-warn-script-location",
		"--index-url", r.index, "--proxy", r.prx.URL(), "--", pkg.Identifier + "==" + pkg.Version}
	env := []string{"PIP_CONFIG_FILE=/dev/null", "PYTHONDONTWRITEBYTECODE=1", "HOME=" + sandbox.Home}
	spec := sandbox.Spec{Args: args, Env: env, Network: true,
		Mounts: append([]sandbox.Mount{{Host: out, Sandbox: "/out", Writable: true}}, py.mounts...),
		Tmpfs:  []sandbox.Tmpfs{{Path: pypiMount, Size: c.maxPackage}},
		Hide:   gitPaths(),
		Limits: sandbox.Limits{CPU: c.timeout, FileSize: c.maxPackage, Memory: c.memory}}
	var stderr bytes.Buffer
	cmd := c.sb.Command(ctx, spec)
	cmd.Cmd.Stdout = io.Discard
	cmd.Cmd.Stderr = &outtext.LimitedBuffer{B: &stderr, Max: 16 << 10}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", &installError{err: fmt.Errorf("pip install did not finish: %v", ctx.Err())}
		}
		return "", &installError{err: pipError(pkg, err, stderr.String())}
	}
	if err := stripModes(out); err != nil {
		return "", err
	}
	return consoleScript(filepath.Join(out, "venv"), pkg)
}

// pipError says why pip installed nothing, in the terms of the record:
// no wheel (an sdist is not built), or a Python the package refuses.
func pipError(pkg *Package, err error, stderr string) error {
	switch {
	case strings.Contains(stderr, "require a different python version") || strings.Contains(stderr, "Requires-Python"):
		return fmt.Errorf("requires_python: %s==%s does not support this machine's python3: %s", pkg.Identifier, pkg.Version, outtext.FirstLines(stderr, 3))
	case strings.Contains(stderr, "No matching distribution") || strings.Contains(stderr, "Could not find a version"):
		return fmt.Errorf("no wheel: %s==%s has no wheel for this machine on the index (an sdist is not built): %s", pkg.Identifier, pkg.Version, outtext.FirstLines(stderr, 3))
	}
	return fmt.Errorf("pip install %s==%s: %v: %s", pkg.Identifier, pkg.Version, err, outtext.FirstLines(outtext.Steady(stderr), 3))
}

// normalizePyPI is a project name as PEP 503 compares them.
func normalizePyPI(n string) string {
	return strings.ToLower(pypiSeparators.ReplaceAllString(n, "-"))
}

var pypiSeparators = regexp.MustCompile(`[-_.]+`)

// maxEntryPoints caps a wheel's entry_points.txt read into memory: a
// real one is a few hundred bytes.
const maxEntryPoints = 1 << 20

// plainScriptName refuses a console script name that is not a plain file
// name: joined to the venv's bin folder, "../../tmp/x" would run /tmp/x.
func plainScriptName(s string) error {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") || len(s) > 255 {
		return fmt.Errorf("console script %q is not a plain file name; not run", s)
	}
	return nil
}

// consoleScript is what runs the package, as uvx --from NAME==VERSION
// NAME would: the console script named like the project, or its only
// console script, or its module (python -m name), found in the installed
// distribution's entry_points.txt. The venv's files are read through its
// root: no link in it reaches outside.
func consoleScript(venv string, pkg *Package) (string, error) {
	want := normalizePyPI(pkg.Identifier)
	dists, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages", "*.dist-info"))
	var scripts []string
	for _, d := range dists {
		base := strings.TrimSuffix(filepath.Base(d), ".dist-info")
		name, _, _ := strings.Cut(base, "-")
		if normalizePyPI(name) != want {
			continue
		}
		rel, err := filepath.Rel(venv, filepath.Join(d, "entry_points.txt"))
		if err != nil {
			break
		}
		b, err := readInRoot(venv, rel, maxEntryPoints)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return "", &installError{err: fmt.Errorf("%s: %w", filepath.ToSlash(rel), err)}
			}
			break
		}
		section := ""
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "[") {
				section = strings.Trim(l, "[]")
				continue
			}
			if k, _, ok := strings.Cut(l, "="); ok && section == "console_scripts" {
				scripts = append(scripts, strings.TrimSpace(k))
			}
		}
	}
	pick := func(s string) (string, error) {
		if err := plainScriptName(s); err != nil {
			return "", &installError{err: fmt.Errorf("%s: %w", pkg.Identifier, err)}
		}
		return s, nil
	}
	for _, s := range scripts {
		if normalizePyPI(s) == want {
			return pick(s)
		}
	}
	if len(scripts) == 1 {
		return pick(scripts[0])
	}
	if len(scripts) > 1 {
		return "", &installError{err: fmt.Errorf("%s has %d console scripts (%s) and none is named like it", pkg.Identifier, len(scripts), strings.Join(scripts, ", "))}
	}
	if len(dists) == 0 {
		return "", &installError{err: errors.New("pip installed no distribution")}
	}
	return "-m " + strings.ReplaceAll(want, "-", "_"), nil
}

// pyModule is a dotted Python module name.
var pyModule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// pypiModule is the module an entry's runtime arguments name with -m
// (runtimeHint python: python -m MODULE), or "".
func pypiModule(p *Package) string {
	var args []string
	for _, a := range p.RuntimeArguments {
		v := a.Value
		if v == "" && a.Default != nil {
			v = *a.Default
		}
		if a.Type == "named" && a.Name != "" {
			args = append(args, a.Name)
		}
		if v != "" {
			args = append(args, v)
		}
	}
	for i, a := range args {
		if a == "-m" && i+1 < len(args) && pyModule.MatchString(args[i+1]) {
			return args[i+1]
		}
	}
	return ""
}
