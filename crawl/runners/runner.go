package runners

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/defaults"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ociroot"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// DefaultPackageConcurrency suits a machine of two cores: each packaged
// server is a node process that spends its first second compiling.
const DefaultPackageConcurrency = 2

// MaxPackageConcurrency is the most sandboxes one crawl runs at once.
const MaxPackageConcurrency = 64

// Options configure how packaged servers are installed and run.
type Options struct {
	// Concurrency bounds the packaged servers installed or running at
	// once.
	Concurrency int
	// Cache is the folder of installed packages; empty means
	// atlas-reproduce/packages under the user's cache folder.
	Cache string
	// CacheMax bounds the cache's disk use, PackageMax one package's.
	CacheMax, PackageMax int64
	// InstallTimeout bounds one install.
	InstallTimeout time.Duration
	// Limits bound each sandboxed server and install (CPU, memory of the
	// whole sandbox, processes, files).
	Limits sandbox.Limits
	// Sandbox runs the servers; nil means sandbox.Find's. Without one,
	// a crawl with a runnable package refuses to start.
	Sandbox *sandbox.Sandbox
}

func (o *Options) defaults() error {
	defaults.Set(&o.Concurrency, DefaultPackageConcurrency)
	if o.Concurrency > MaxPackageConcurrency {
		return fmt.Errorf("package concurrency %d: at most %d sandboxes run at once", o.Concurrency, MaxPackageConcurrency)
	}
	defaults.Set(&o.CacheMax, DefaultPackageCacheMax)
	defaults.Set(&o.PackageMax, DefaultPackageMax)
	defaults.Set(&o.InstallTimeout, DefaultInstallTimeout)
	if o.Cache == "" && os.Geteuid() == 0 {
		o.Cache = rootCache
	}
	if o.Cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("package cache: %w (give one with --package-cache)", err)
		}
		o.Cache = filepath.Join(d, "atlas-reproduce", "packages")
	}
	return nil
}

// Set installs and runs packaged servers: the registry types
// with a runner on this machine (npm, with node) in the sandbox, the
// others as records of kind no_runtime.
type Set struct {
	p     *probe.Prober
	sb    *sandbox.Sandbox
	cache *npmCache
	node  string
	// nodeMount shows node's installation in the sandbox when it lives
	// outside /usr.
	nodeMount []sandbox.Mount
	limits    sandbox.Limits
	proxy     *sandbox.Proxy
	noNPM     string // why npm packages cannot run here, or ""
	noSandbox string // why no sandbox runs here, or ""
	oci       ociroot.Options
	pypi      *pypiRunner
}

// runnable says the package needs the sandbox: a type this crawl runs.
func runnable(p *Package) bool {
	return hasRunner(p.RegistryType) && p.Transport == probe.TransportStdio && p.Invalid == ""
}

// hasRunner says packages of registry type t have a runner here.
func hasRunner(t string) bool {
	return t == RegistryNPM || t == RegistryOCI || t == RegistryPyPI || t == RegistryMCPB
}

// New prepares the runners of pkgs, which p probes. A machine without a
// runtime or a sandbox is recorded per package, not an error.
func New(ctx context.Context, p *probe.Prober, opt *Options, pkgs []*Package) (*Set, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	pr := &Set{p: p, limits: opt.Limits}
	n, npmN, pypiN := 0, 0, 0
	for _, pkg := range pkgs {
		if runnable(pkg) {
			n++
			switch pkg.RegistryType {
			case RegistryNPM:
				npmN++
			case RegistryPyPI, RegistryMCPB:
				// A bundle's server may be python.
				pypiN++
			}
		}
	}
	if n == 0 {
		return pr, nil
	}
	npm, nerr := exec.LookPath("npm")
	node, derr := exec.LookPath("node")
	if nerr != nil || derr != nil {
		// No runtime is a fact of the machine, recorded per server as
		// for the types with no runner: nothing would run bare.
		pr.noNPM = "npm and node are needed to run npm packages, and this machine lacks one"
		if npmN == n {
			return pr, nil
		}
	}
	pr.sb = opt.Sandbox
	if pr.sb == nil {
		sb, err := sandbox.Find(ctx)
		if err != nil {
			// A machine without a sandbox still crawls its remotes: each
			// package becomes a record of kind no_sandbox saying why.
			pr.noSandbox = "packaged servers run only in a sandbox, and this machine has none: " + err.Error()
			return pr, nil
		}
		pr.sb = sb
	}
	pr.cache = &npmCache{dir: opt.Cache, sb: pr.sb, memory: opt.Limits.Memory,
		max: opt.CacheMax, maxPackage: opt.PackageMax, timeout: opt.InstallTimeout}
	if pr.noNPM == "" {
		if err := pr.prepareNPM(ctx, npm, node); err != nil {
			return nil, err
		}
	}
	if pypiN > 0 {
		if err := pr.preparePyPI(ctx); err != nil {
			pr.closeProxies()
			return nil, err
		}
	}
	if err := pr.cache.prepare(); err != nil {
		pr.closeProxies()
		return nil, fmt.Errorf("package cache: %w", err)
	}
	pr.cache.cleanStale(time.Now().Add(-2 * opt.InstallTimeout))
	pr.oci = pr.ociOptions(opt)
	return pr, nil
}

// prepareNPM readies the npm runner: node and npm's folders shown in the
// sandbox, and the proxy to the registry npm is configured with.
func (pr *Set) prepareNPM(ctx context.Context, npm, node string) error {
	real, err := filepath.EvalSymlinks(node)
	if err != nil {
		return err
	}
	pr.node = real
	if !strings.HasPrefix(real, "/usr/") {
		// node/bin/node: show the whole installation, read-only.
		root := filepath.Dir(filepath.Dir(real))
		pr.nodeMount = []sandbox.Mount{{Host: root, Sandbox: root}}
	}
	cli, err := filepath.EvalSymlinks(npm)
	if err != nil {
		return err
	}
	mounts := pr.nodeMount
	if i := strings.LastIndex(cli, "/node_modules/npm/"); i >= 0 && !strings.HasPrefix(cli, "/usr/") {
		root := cli[:i+len("/node_modules/npm")]
		mounts = append(mounts, sandbox.Mount{Host: root, Sandbox: root})
	}
	conf, err := readNPMConfig(ctx, npm)
	if err != nil {
		return err
	}
	if err := conf.checkRegistryTLS(ctx); err != nil {
		return err
	}
	via, err := conf.upstream()
	if err != nil {
		return err
	}
	proxy, err := sandbox.NewProxyVia(via, conf.Registry)
	if err != nil {
		return err
	}
	pr.proxy = proxy
	c := pr.cache
	c.node, c.npmCLI, c.mounts, c.hide, c.registry, c.proxy, c.conf = real, cli, mounts, gitPaths(), conf.Registry, proxy, conf
	return nil
}

// gitPaths are git's programs, hidden from an install: npm would run git
// for a git dependency.
func gitPaths() []string {
	var out []string
	for _, p := range []string{"/usr/bin/git", "/usr/lib/git-core", "/usr/libexec/git-core", "/usr/local/bin/git"} {
		if _, err := os.Stat(p); err == nil && strings.HasPrefix(p, "/usr/") {
			out = append(out, p)
		}
	}
	return out
}

// Probe installs and runs one packaged server for worker slot, and
// lists its tools as Probe does a remote's. Its failures are records.
func (pr *Set) Probe(ctx context.Context, slot int, pkg *Package) probe.Result {
	start := time.Now()
	r := pr.run(ctx, slot, pkg)
	r.Elapsed = time.Since(start)
	return r
}

func (pr *Set) run(ctx context.Context, slot int, pkg *Package) probe.Result {
	switch {
	case pkg.Invalid != "":
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindInstall, Error: "registry entry: " + pkg.Invalid}
	case !hasRunner(pkg.RegistryType):
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindNoRuntime,
			Error: fmt.Sprintf("no runner for %s packages on this machine", pkg.RegistryType)}
	case pkg.Transport != probe.TransportStdio:
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindNoRuntime,
			Error: fmt.Sprintf("no runner for packaged servers over %q (stdio only)", pkg.Transport)}
	case pkg.RegistryType == RegistryNPM && pr.noNPM != "":
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindNoRuntime, Error: pr.noNPM}
	case pr.noSandbox != "":
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindNoSandbox, Error: pr.noSandbox}
	case pkg.RegistryType == RegistryOCI:
		return pr.runImage(ctx, pkg)
	case pkg.RegistryType == RegistryPyPI:
		return pr.runPyPI(ctx, pkg)
	case pkg.RegistryType == RegistryMCPB:
		return pr.runBundle(ctx, pkg)
	}
	return pr.runNPM(ctx, pkg)
}

// runNPM installs an npm package with npm and runs its entry point with
// the machine's node.
func (pr *Set) runNPM(ctx context.Context, pkg *Package) probe.Result {
	in, err := pr.cache.acquire(ctx, pkg)
	if err != nil {
		return acquireError(ctx, err)
	}
	defer pr.cache.release(in.key)
	args := append([]string{pr.node, path.Join(pkgMount, in.main)}, packageArgs(pkg)...)
	spec := sandbox.Spec{Args: args, Env: packageEnv(pkg), Limits: pr.limits,
		Mounts: append([]sandbox.Mount{{Host: in.dir, Sandbox: pkgMount}}, pr.nodeMount...)}
	r := pr.p.Command(ctx, sandboxed(pr.sb, spec))
	r.Runner = &probe.RunnerInfo{Runner: RegistryNPM, Argv: args, Resolved: pkg.Identifier + "@" + pkg.Version}
	return needsConfig(pkg, r)
}

// needsConfig makes a server that did not start, and whose entry names
// required variables or arguments without default, a needs_config record.
func needsConfig(pkg *Package, r probe.Result) probe.Result {
	if missing := pkg.MissingConfig(); len(missing) > 0 && !r.Initialized && r.ErrorKind != "" {
		r.Error = fmt.Sprintf("needs configuration (%s: required, no default; none is invented) and did not start without: %s: %s",
			strings.Join(missing, ", "), r.ErrorKind, r.Error)
		r.ErrorKind = probe.KindNeedsConfig
	}
	return r
}

// acquireError is the record of a package the cache could not provide.
func acquireError(ctx context.Context, err error) probe.Result {
	if ctx.Err() != nil {
		return probe.Result{ErrorKind: probe.KindTimeout, Error: "the crawl was stopped"}
	}
	// A package's host refused by the address policy is blocked, as a
	// refused remote is, whichever runner asked: a connection the dialer
	// refused, or plain HTTP that the policy allows only to a loopback
	// host with --allow-private (an image's registry, a bundle's host).
	if errors.Is(err, probe.ErrBlocked) || errors.Is(err, ociroot.ErrPlainHTTP) || errors.Is(err, errPlainBundle) {
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindBlocked, Error: err.Error()}
	}
	var ie *installError
	if errors.As(err, &ie) {
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindInstall, Error: err.Error()}
	}
	return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindInstall, Error: "package cache: " + err.Error()}
}

// pkgMount is where the installed package is seen in the sandbox.
const pkgMount = "/pkg"

// packageArgs are the package arguments with their values or defaults;
// one without either is left out. Runtime arguments are the runtime
// hint's (npx's), and node needs none of them.
func packageArgs(p *Package) []string {
	var out []string
	for _, a := range p.PackageArguments {
		v := a.Value
		if v == "" && a.Default != nil {
			v = *a.Default
		}
		v, ok := substitute(v, a.Variables)
		switch {
		case !ok:
			// A {variable} without a default: the argument is left out,
			// as one without a value is; none is invented.
		case a.Type == "named" && a.Name != "":
			out = append(out, a.Name)
			if v != "" {
				out = append(out, v)
			}
		case v != "":
			out = append(out, v)
		}
	}
	return out
}

// argVar is a {variable} of an argument's value, as server.json writes it.
var argVar = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_.-]*)\}`)

// substitute fills the {variables} of v with their defaults; it fails when
// one has none.
func substitute(v string, vars map[string]*string) (string, bool) {
	ok := true
	v = argVar.ReplaceAllStringFunc(v, func(m string) string {
		d, found := vars[m[1:len(m)-1]]
		if !found || d == nil {
			if found {
				ok = false
			}
			return m // not a variable the entry declares: literal text
		}
		return *d
	})
	return v, ok
}

// packageEnv is the server's environment: the defaults its entry
// publishes, nothing of the crawl's own.
func packageEnv(p *Package) []string {
	var out []string
	for _, e := range p.Env {
		if e.Default != nil && e.Name != "" && !strings.ContainsAny(e.Name, "=\x00") {
			out = append(out, e.Name+"="+*e.Default)
		}
	}
	return out
}

// sandboxed is the probe's Start of spec in sb: the one place a probed
// program is put in the sandbox.
func sandboxed(sb *sandbox.Sandbox, spec sandbox.Spec) probe.Start {
	return func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) probe.Process {
		c := sb.Command(ctx, spec)
		c.Cmd.Stdin, c.Cmd.Stdout, c.Cmd.Stderr = stdin, stdout, stderr
		return c
	}
}

// Close releases the runners' prober and proxies; a nil Set has none.
func (pr *Set) Close() {
	if pr != nil {
		pr.p.Close()
		pr.closeProxies()
	}
}

// Traffic is what the install steps fetched from their registries, and
// through how many connections.
func (pr *Set) Traffic() (bytes, conns int64) {
	if pr == nil {
		return 0, 0
	}
	for _, p := range pr.proxies() {
		b, c := p.Traffic()
		bytes, conns = bytes+b, conns+c
	}
	return bytes, conns
}

// proxies are the install steps' proxies the runner started.
func (pr *Set) proxies() []*sandbox.Proxy {
	var out []*sandbox.Proxy
	if pr.proxy != nil {
		out = append(out, pr.proxy)
	}
	if pr.pypi != nil && pr.pypi.proxy != nil {
		out = append(out, pr.pypi.proxy)
	}
	return out
}

// closeProxies stops the install steps' proxies.
func (pr *Set) closeProxies() {
	for _, p := range pr.proxies() {
		p.Close()
	}
}
