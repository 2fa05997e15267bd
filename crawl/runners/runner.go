package runners

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
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
	// ReuseRecords takes a server's record from an earlier run of the
	// same install under the same conditions, instead of running it
	// again (see reuse.go); Conditions names the crawl's options that
	// can change a record, which are part of those conditions.
	ReuseRecords bool
	Conditions   string
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

// Set installs and runs packaged servers: the registry types with a
// runner here (the table of table.go) in the sandbox, each type's Runner
// readied once; the others, and those a machine cannot run, become
// records of kind no_runtime or no_sandbox.
type Set struct {
	p         *probe.Prober
	sb        *sandbox.Sandbox
	cache     *npmCache
	limits    sandbox.Limits
	noSandbox string // why no sandbox runs here, or ""
	// runners are the Set's Runner of each type among its packages, and
	// why each cannot run here ("" when it can).
	runners map[string]Runner
	no      map[string]string
	// The runtimes more than one type runs servers with (npm packages and
	// node bundles, PyPI packages and python bundles), found once.
	node string
	// nodeMount shows node's installation in the sandbox when it lives
	// outside /usr.
	nodeMount []sandbox.Mount
	python    *pythonRuntime
	// reuse, conditionsOf and runtimes serve runServer's reuse of
	// records; reused counts the records reused.
	reuse        bool
	conditionsOf string
	runtimes     fileSums
	reused       atomic.Int64
}

// New prepares the runners of pkgs, which p probes. A machine without a
// runtime or a sandbox is recorded per package, not an error.
func New(ctx context.Context, p *probe.Prober, opt *Options, pkgs []*Package) (*Set, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	s := &Set{p: p, limits: opt.Limits, runners: map[string]Runner{}, no: map[string]string{},
		reuse: opt.ReuseRecords, conditionsOf: opt.Conditions}
	for _, pkg := range pkgs {
		if _, made := s.runners[pkg.RegistryType]; !runnable(pkg) || made {
			continue
		}
		r, _ := lookup(pkg.RegistryType)
		s.runners[pkg.RegistryType] = r
		// A runtime missing is a fact of the machine, recorded per server
		// as for the types with no runner: nothing would run bare.
		if why := r.find(); why != "" {
			s.no[pkg.RegistryType] = why
		}
	}
	if len(s.no) == len(s.runners) {
		return s, nil // nothing to run here: no sandbox is needed
	}
	s.sb = opt.Sandbox
	if s.sb == nil {
		sb, err := sandbox.Find(ctx)
		if err != nil {
			// A machine without a sandbox still crawls its remotes: each
			// package becomes a record of kind no_sandbox saying why.
			s.noSandbox = "packaged servers run only in a sandbox, and this machine has none: " + err.Error()
			return s, nil
		}
		s.sb = sb
	}
	s.cache = &npmCache{dir: opt.Cache, sb: s.sb, memory: opt.Limits.Memory,
		max: opt.CacheMax, maxPackage: opt.PackageMax, timeout: opt.InstallTimeout, metadataMaxAge: opt.MetadataMaxAge}
	for _, t := range slices.Sorted(maps.Keys(s.runners)) {
		if s.no[t] != "" {
			continue
		}
		if err := s.runners[t].prepare(ctx, s); err != nil {
			s.closeProxies()
			return nil, err
		}
	}
	if err := s.cache.prepare(); err != nil {
		s.closeProxies()
		return nil, fmt.Errorf("package cache: %w", err)
	}
	s.cache.cleanStale(time.Now().Add(-2 * opt.InstallTimeout))
	return s, nil
}

// findNode resolves node, found at bin, and shows its installation in
// the sandbox when it lives outside /usr.
func (pr *Set) findNode(bin string) error {
	if pr.node != "" {
		return nil
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return err
	}
	pr.node = real
	if !strings.HasPrefix(real, "/usr/") {
		// node/bin/node: show the whole installation, read-only.
		root := filepath.Dir(filepath.Dir(real))
		pr.nodeMount = []sandbox.Mount{{Host: root, Sandbox: root}}
	}
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
	r := pr.run(ctx, pkg)
	r.Elapsed = time.Since(start)
	return r
}

func (pr *Set) run(ctx context.Context, pkg *Package) probe.Result {
	r, _ := lookup(pkg.RegistryType)
	switch {
	case pkg.Invalid != "":
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindInstall, Error: "registry entry: " + pkg.Invalid}
	case r == nil:
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindNoRuntime,
			Error: fmt.Sprintf("no runner for %s packages on this machine", pkg.RegistryType)}
	case pkg.Transport != probe.TransportStdio:
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindNoRuntime,
			Error: fmt.Sprintf("no runner for packaged servers over %q (stdio only)", pkg.Transport)}
	case pr.no[pkg.RegistryType] != "":
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindNoRuntime, Error: pr.no[pkg.RegistryType]}
	case pr.noSandbox != "":
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindNoSandbox, Error: pr.noSandbox}
	case pr.runners[pkg.RegistryType] == nil:
		return probe.Result{Transport: pkg.Transport, ErrorKind: probe.KindNoRuntime,
			Error: fmt.Sprintf("no %s runner was readied for this package", pkg.RegistryType)}
	}
	return pr.runners[pkg.RegistryType].run(ctx, pr, pkg)
}

// unavailable says why pkg cannot run on this machine (its runtime or
// the sandbox missing), or "".
func (pr *Set) unavailable(pkg *Package) string {
	if why := pr.no[pkg.RegistryType]; why != "" {
		return why
	}
	return pr.noSandbox
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

// NPMTarballs is how many npm tarballs the installs fetched (through
// the proxy the crawl sees bytes and tunnels, not requests).
func (pr *Set) NPMTarballs() int64 {
	if pr == nil || pr.cache == nil {
		return 0
	}
	return pr.cache.tarballs.Load()
}

// proxies are the install steps' proxies the runners started.
func (pr *Set) proxies() []*sandbox.Proxy {
	var out []*sandbox.Proxy
	for _, t := range slices.Sorted(maps.Keys(pr.runners)) {
		if p := pr.runners[t].proxy(); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// closeProxies stops the install steps' proxies.
func (pr *Set) closeProxies() {
	if pr.cache != nil && pr.cache.client != nil {
		pr.cache.client.CloseIdleConnections()
	}
	for _, p := range pr.proxies() {
		p.Close()
	}
}
