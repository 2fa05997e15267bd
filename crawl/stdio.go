package crawl

import (
	"bytes"
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
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/internal/defaults"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ociroot"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// DefaultPackageConcurrency suits a machine of two cores: each packaged
// server is a node process that spends its first second compiling.
const DefaultPackageConcurrency = 2

// MaxPackageConcurrency is the most sandboxes one crawl runs at once.
const MaxPackageConcurrency = 64

// PackageOptions configure how packaged servers are installed and run.
type PackageOptions struct {
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
	// MetadataMaxAge is how old the npm packuments cached by earlier
	// crawls that a crawl starts with may be; zero keeps none, so that a
	// crawl reads the registry as of its start (within a crawl, a
	// packument is fetched once, whatever its age: see dropPackuments).
	MetadataMaxAge time.Duration
	// Limits bound each sandboxed server and install (CPU, memory of the
	// whole sandbox, processes, files).
	Limits sandbox.Limits
	// Sandbox runs the servers; nil means sandbox.Find's. Without one,
	// a crawl with a runnable package refuses to start.
	Sandbox *sandbox.Sandbox
}

func (o *PackageOptions) defaults() error {
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

// packageRunner installs and runs packaged servers: the registry types
// with a runner on this machine (npm, with node) in the sandbox, the
// others as records of kind no_runtime.
type packageRunner struct {
	p     *Prober
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
	return hasRunner(p.RegistryType) && p.Transport == TransportStdio && p.Invalid == ""
}

// hasRunner says packages of registry type t have a runner here.
func hasRunner(t string) bool {
	return t == RegistryNPM || t == RegistryOCI || t == RegistryPyPI || t == RegistryMCPB
}

// newPackageRunner prepares the runner for pkgs. A machine without a
// runtime or a sandbox is recorded per package, not an error.
func newPackageRunner(ctx context.Context, p *Prober, opt *PackageOptions, pkgs []*Package) (*packageRunner, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	pr := &packageRunner{p: p, limits: opt.Limits}
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
		max: opt.CacheMax, maxPackage: opt.PackageMax, timeout: opt.InstallTimeout, metadataMaxAge: opt.MetadataMaxAge}
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
func (pr *packageRunner) prepareNPM(ctx context.Context, npm, node string) error {
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

// probe installs and runs one packaged server for worker slot, and
// lists its tools as Probe does a remote's. Its failures are records.
func (pr *packageRunner) probe(ctx context.Context, slot int, pkg *Package) Result {
	start := time.Now()
	r := pr.run(ctx, slot, pkg)
	r.Elapsed = time.Since(start)
	return r
}

func (pr *packageRunner) run(ctx context.Context, slot int, pkg *Package) Result {
	switch {
	case pkg.Invalid != "":
		return Result{Transport: pkg.Transport, ErrorKind: KindInstall, Error: "registry entry: " + pkg.Invalid}
	case !hasRunner(pkg.RegistryType):
		return Result{Transport: pkg.Transport, ErrorKind: KindNoRuntime,
			Error: fmt.Sprintf("no runner for %s packages on this machine", pkg.RegistryType)}
	case pkg.Transport != TransportStdio:
		return Result{Transport: pkg.Transport, ErrorKind: KindNoRuntime,
			Error: fmt.Sprintf("no runner for packaged servers over %q (stdio only)", pkg.Transport)}
	case pkg.RegistryType == RegistryNPM && pr.noNPM != "":
		return Result{Transport: pkg.Transport, ErrorKind: KindNoRuntime, Error: pr.noNPM}
	case pr.noSandbox != "":
		return Result{Transport: pkg.Transport, ErrorKind: KindNoSandbox, Error: pr.noSandbox}
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
func (pr *packageRunner) runNPM(ctx context.Context, pkg *Package) Result {
	in, err := pr.cache.acquire(ctx, pkg)
	if err != nil {
		return acquireError(ctx, err)
	}
	defer pr.cache.release(in.key)
	args := append([]string{pr.node, path.Join(pkgMount, in.main)}, packageArgs(pkg)...)
	spec := sandbox.Spec{Args: args, Env: packageEnv(pkg), Limits: pr.limits,
		Mounts: append([]sandbox.Mount{{Host: in.dir, Sandbox: pkgMount}}, pr.nodeMount...)}
	r := pr.p.probeCommand(ctx, func(ctx context.Context) *sandbox.Cmd { return pr.sb.Command(ctx, spec) })
	r.Runner = &RunnerInfo{Runner: RegistryNPM, Argv: args, Resolved: pkg.Identifier + "@" + pkg.Version}
	return needsConfig(pkg, r)
}

// needsConfig makes a server that did not start, and whose entry names
// required variables or arguments without default, a needs_config record.
func needsConfig(pkg *Package, r Result) Result {
	if missing := pkg.missingConfig(); len(missing) > 0 && !r.Initialized && r.ErrorKind != "" {
		r.Error = fmt.Sprintf("needs configuration (%s: required, no default; none is invented) and did not start without: %s: %s",
			strings.Join(missing, ", "), r.ErrorKind, r.Error)
		r.ErrorKind = KindNeedsConfig
	}
	return r
}

// acquireError is the record of a package the cache could not provide.
func acquireError(ctx context.Context, err error) Result {
	if ctx.Err() != nil {
		return Result{ErrorKind: KindTimeout, Error: "the crawl was stopped"}
	}
	// A package's host refused by the address policy is blocked, as a
	// refused remote is, whichever runner asked: a connection the dialer
	// refused, or plain HTTP that the policy allows only to a loopback
	// host with --allow-private (an image's registry, a bundle's host).
	if errors.Is(err, errBlocked) || errors.Is(err, ociroot.ErrPlainHTTP) || errors.Is(err, errPlainBundle) {
		return Result{Transport: TransportStdio, ErrorKind: KindBlocked, Error: err.Error()}
	}
	var ie *installError
	if errors.As(err, &ie) {
		return Result{Transport: TransportStdio, ErrorKind: KindInstall, Error: err.Error()}
	}
	return Result{Transport: TransportStdio, ErrorKind: KindInstall, Error: "package cache: " + err.Error()}
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

// stderrKeep bounds what is kept of a server's standard error for its
// record.
const stderrKeep = 2 << 10

// probeCommand runs the program start returns and speaks MCP to it over
// its standard input and output, through the SDK's newline-delimited
// JSON transport, with the bounds of Probe: one deadline for the whole
// exchange, the byte cap and memory budget on everything it prints, the
// same capture of raw tools and the same error kinds, plus exited for a
// program that ends before the listing is done. The program is killed,
// with its whole process tree, when the listing is done or fails.
func (p *Prober) probeCommand(ctx context.Context, start func(context.Context) *sandbox.Cmd) (r Result) {
	ctx, cancel := withProbeDeadline(ctx, p.opt.Timeout)
	defer cancel()
	defer recoverClientFailure(&r)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return Result{ErrorKind: KindProtocol, Error: err.Error()}
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return Result{ErrorKind: KindProtocol, Error: err.Error()}
	}
	cmd := start(ctx)
	var stderr bytes.Buffer
	cmd.Cmd.Stdin, cmd.Cmd.Stdout, cmd.Cmd.Stderr = stdinR, stdoutW, &limitedBuffer{b: &stderr, max: stderrKeep}
	err = cmd.Start()
	// The child has its ends now; only it may hold them, so that its
	// exit is an end of file here.
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return Result{Transport: TransportStdio, ErrorKind: KindExited, Error: "starting the sandbox: " + err.Error()}
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	var once sync.Once
	kill := func() { once.Do(cmd.Kill) }
	stopKill := context.AfterFunc(ctx, kill)
	defer func() {
		stopKill()
		kill()
		<-exited
		if cmd.MemoryExceeded() {
			r = Result{Transport: TransportStdio, ErrorKind: KindMemory, Error: waitErr.Error()}
			if s := strings.TrimSpace(stderr.String()); s != "" {
				r.Error += "; stderr: " + firstLines(steadyText(s), 5)
			}
		}
	}()

	hs := &httpState{ctx: ctx, p: p, mem: p.opt.Budget.newAccount()}
	out := &countedBody{rc: stdoutR, hs: hs, done: func() {}}
	lines := newMessageLines(out)
	r = p.session(ctx, hs, &mcp.IOTransport{Reader: readCloser{lines, out}, Writer: stdinW, MaxLineLength: p.maxEventSize()}, TransportStdio)
	out.Close()
	r.SkippedLines = lines.Skipped
	stdinW.Close()
	if r.Reachable || (r.ErrorKind != KindProtocol && r.ErrorKind != KindConnect) {
		// A kind decided where the failure was met stands.
		return r
	}
	// A connection that ended is most often the program's end: give it a
	// moment to be reaped, so that its exit is what the record says.
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-exited:
		r.ErrorKind = KindExited
		r.Error = fmt.Sprintf("%s; the server exited (%s)", r.Error, exitText(waitErr))
		if s := strings.TrimSpace(stderr.String()); s != "" {
			r.Error += "; stderr: " + firstLines(steadyText(s), 5)
		}
	case <-t.C:
	case <-ctx.Done():
	}
	return r
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// readCloser reads from one value and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
