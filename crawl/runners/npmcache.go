package runners

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/outtext"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// Defaults of the package cache.
const (
	DefaultPackageCacheMax = 4 << 30
	DefaultPackageMax      = 512 << 20
	DefaultInstallTimeout  = 5 * time.Minute
)

// completeFile marks an installed package folder of the cache; it holds
// the folder's size in bytes and the entry point, and its mtime is the
// last use.
const completeFile = ".atlas-complete"

// npmCache installs npm packages, one folder each, into a cache folder
// bounded in size: the least recently used folders not in use go first.
// Packages are fetched by npm, from the registry npm is configured with
// (npm_config_registry, .npmrc), never from an entry's registryBaseUrl,
// and their lifecycle scripts never run (--ignore-scripts).
type npmCache struct {
	dir        string
	sb         *sandbox.Sandbox
	node       string // node's path, in the sandbox as on the host
	npmCLI     string // npm's npm-cli.js, run by node
	mounts     []sandbox.Mount
	hide       []string // paths an install must not run (git)
	registry   string   // the registry npm is configured with
	conf       npmConfig
	confEnv    []string // npm's CA files and strict-ssl, as the sandbox sees them
	hasCAs     bool     // confEnv names copies of CA files in caDir
	store      *pkgStore
	proxy      *sandbox.Proxy
	memory     int64 // the install sandbox's memory bound
	max        int64 // the whole cache
	maxPackage int64 // one installed package
	timeout    time.Duration
	// metadataMaxAge is how old the packuments a crawl starts with may be.
	metadataMaxAge time.Duration

	tarballs    atomic.Int64 // fetched by the installs
	clientOnce  sync.Once
	client      *http.Client // the installs' fetches, through proxy
	registryURL *url.URL

	mu     sync.Mutex
	inUse  map[string]int
	flight map[string]*sync.Mutex // one install of a package at a time

	// storeMu keeps Adopt and Prune apart (Prune must not remove a file
	// an Adopt is linking) and guards storeBytes, the store's size. Lock
	// order: mu, then storeMu.
	storeMu    sync.Mutex
	storeBytes int64
	// storeKnown says storeBytes is the store's size: it is learnt (a
	// walk of the whole store) only when the folders' apparent sizes
	// pass the bound, the only time eviction needs it.
	storeKnown bool
}

// installed is a package ready to run: its cache folder and the entry
// point's path inside it. id names this install of the folder, so that
// what was recorded of it (see reuse.go) is never taken for another's.
type installed struct {
	key, dir, main, id string
	cached             bool
}

// installError is an install that failed; the package becomes a record
// of kind install.
type installError struct {
	err error
	// settled says the same install would fail the same way as long as
	// the registry answers the same: a version or dependency that does
	// not exist or does not resolve, a dependency outside the registry,
	// a package past the bound, no entry point. Such a failure is kept
	// for reuse (see reuse.go); a deadline, a network error or a memory
	// bound is not.
	settled bool
}

func (e *installError) Error() string { return e.err.Error() }
func (e *installError) Unwrap() error { return e.err }

func (c *npmCache) key(p *Package) string {
	h := sha256.Sum256([]byte(p.Identifier + "@" + p.Version))
	name := strings.NewReplacer("@", "", "/", "-").Replace(p.Identifier)
	if len(name) > 40 {
		name = name[:40]
	}
	return "npm-" + name + "-" + hex.EncodeToString(h[:8])
}

// npmName is an npm package name, scoped or not (old names may hold
// capitals), and npmVersion an exact version: nothing npm would read as a
// path, a URL, a git remote, a tag or a range.
var (
	npmName    = regexp.MustCompile(`^(@[A-Za-z0-9~-][A-Za-z0-9._~-]*/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*$`)
	npmVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$`)
)

// acquire installs p (or finds it installed) and holds it in the cache
// until release.
func (c *npmCache) acquire(ctx context.Context, p *Package) (installed, error) {
	if !npmName.MatchString(p.Identifier) || len(p.Identifier) > 214 {
		return installed{}, &installError{err: fmt.Errorf("%q is not an npm package name", p.Identifier)}
	}
	if !npmVersion.MatchString(p.Version) {
		return installed{}, &installError{err: fmt.Errorf("%q is not an exact npm version", p.Version)}
	}
	return c.hold(c.key(p), func(dir string) (installed, error) { return c.install(ctx, p, dir) })
}

func (c *npmCache) release(key string) {
	c.mu.Lock()
	c.inUse[key]--
	c.mu.Unlock()
}

// readComplete reads the mark of a whole folder: its entry point and
// the id of its install ("" for a folder sealed before marks had one).
func readComplete(dir string) (main, id string, err error) {
	b, err := os.ReadFile(filepath.Join(dir, completeFile))
	if err != nil {
		return "", "", err
	}
	var m struct {
		Main string `json:"main"`
		ID   string `json:"id"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Main == "" {
		return "", "", errors.New("incomplete")
	}
	return m.Main, m.ID, nil
}

// install runs npm in an install sandbox (sandboxStep) and renames its
// folder to dir once the package is known to fit and to have an entry
// point.
func (c *npmCache) install(ctx context.Context, p *Package, dir string) (installed, error) {
	tmp, err := os.MkdirTemp(c.dir, ".install-")
	if err != nil {
		return installed{}, err
	}
	defer os.RemoveAll(tmp)
	_ = os.RemoveAll(dir) // a folder without its mark is a torn install
	if err := c.own(tmp); err != nil {
		return installed{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var stderr bytes.Buffer
	refusedBefore := len(c.proxy.Refused())
	cmd := c.sb.Command(ctx, c.installSpec(p, tmp))
	cmd.Cmd.Stdout = io.Discard
	cmd.Cmd.Stderr = &outtext.LimitedBuffer{B: &stderr, Max: 4 << 10}
	if err := cmd.Run(); err != nil {
		if err := c.pastDeadline(ctx); err != nil {
			return installed{}, err
		}
		msg := outtext.FirstLines(outtext.Steady(stderr.String()), 3)
		refused := c.proxy.Refused()[refusedBefore:]
		if len(refused) > 0 {
			// Installs run side by side: these are the refusals while
			// this one ran.
			msg += fmt.Sprintf(" (the registry-only proxy refused meanwhile: %s)", strings.Join(refused, ", "))
		}
		return installed{}, &installError{err: fmt.Errorf("npm install %s@%s: %v: %s", p.Identifier, p.Version, err, msg),
			settled: settledNPMError(stderr.String(), len(refused) > 0)}
	}
	var skip []string
	b, err := readInRoot(tmp, "skip.json", maxLockfile)
	if err == nil {
		err = json.Unmarshal(b, &skip)
	}
	if err != nil {
		return installed{}, &installError{err: fmt.Errorf("npm install %s@%s: npm's checks: %v", p.Identifier, p.Version, err)}
	}
	pkgs, err := readLockfile(tmp, skip)
	if err != nil {
		return installed{}, &installError{err: fmt.Errorf("npm install %s@%s: %v", p.Identifier, p.Version, err)}
	}
	lay := c.layout()
	in, err := c.layOut(ctx, p, lay, pkgs, tmp, dir)
	if err != nil {
		// What the store took in for this install alone goes with it.
		_ = os.RemoveAll(tmp)
		freed := pruneUsed(c.store, filepath.Join(c.dir, manifestsDir), lay.usedList()) + lay.pruneUnpacked()
		c.storeMu.Lock()
		if c.storeKnown {
			c.storeBytes -= freed
		}
		c.storeMu.Unlock()
	}
	return in, err
}

// layOut lays the resolved tree out in tmp (see npmLayout) and seals it
// as the package folder dir.
func (c *npmCache) layOut(ctx context.Context, p *Package, lay *npmLayout, pkgs []lockPackage, tmp, dir string) (installed, error) {
	for _, f := range []string{"package-lock.json", "skip.json"} {
		if err := os.Remove(filepath.Join(tmp, f)); err != nil {
			return installed{}, err
		}
	}
	err := lay.lay(ctx, tmp, pkgs)
	if err == nil {
		// Optional versions that failed part way are gone from tmp.
		lay.added.Add(-lay.pruneUnpacked())
	}
	c.storeMu.Lock()
	if c.storeKnown {
		c.storeBytes += lay.added.Load()
	}
	c.storeMu.Unlock()
	if err != nil {
		if err := c.pastDeadline(ctx); err != nil {
			return installed{}, err
		}
		return installed{}, &installError{err: fmt.Errorf("npm install %s@%s: %v", p.Identifier, p.Version, err)}
	}
	main, err := entryPoint(tmp, p.Identifier)
	if err != nil {
		return installed{}, &installError{err: err, settled: true}
	}
	if err := lay.recordUse(tmp); err != nil {
		return installed{}, err
	}
	return c.seal(tmp, dir, main)
}

// npmErrorCode is the code npm names a failure by ("npm error code E404").
var npmErrorCode = regexp.MustCompile(`(?m)^npm (?:error|ERR!) code (E[A-Z0-9]+)$`)

// settledNPMError says npm's failure, from its stderr, is one the same
// install meets again while the registry answers the same (see
// installError.settled); refused says the registry-only proxy refused a
// host meanwhile, the cause of an E403 for a dependency outside the
// registry.
func settledNPMError(stderr string, refused bool) bool {
	m := npmErrorCode.FindStringSubmatch(stderr)
	if m == nil {
		return false
	}
	switch m[1] {
	case "E404", "ETARGET", "ENOVERSIONS", "ERESOLVE", "EUNSUPPORTEDPROTOCOL":
		return true
	case "E403":
		return refused
	}
	return false
}

// pastDeadline is the install record of an npm install that failed
// because its time ran out, or nil when something else failed it.
func (c *npmCache) pastDeadline(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &installError{err: fmt.Errorf("npm install did not finish within %v", c.timeout)}
	}
	return nil
}

// layout is one install's layout of the lockfile's tree from the store,
// fetching through the install's proxy with npm's TLS settings.
func (c *npmCache) layout() *npmLayout {
	c.clientOnce.Do(func() {
		tc, err := c.conf.tlsConfig()
		if err != nil {
			tc = nil // checked before the crawl began (checkRegistryTLS)
		}
		proxy, _ := url.Parse(c.proxy.URL())
		c.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: tc,
			MaxIdleConnsPerHost: npmFetches, TLSHandshakeTimeout: 30 * time.Second, ResponseHeaderTimeout: 60 * time.Second}}
		c.registryURL, _ = url.Parse(c.registry)
	})
	return &npmLayout{store: c.store, manifests: filepath.Join(c.dir, manifestsDir), client: c.client,
		registry: c.registryURL, max: c.maxPackage, fetches: npmFetches, fetched: &c.tarballs}
}

// npmFetches is how many tarballs one install fetches at once (npm's
// own default is 15 sockets a host).
const npmFetches = 8

// storeDir is the content-addressed store of the installed packages'
// files, in the package cache (hard links need one file system).
const storeDir = ".store"

// npmCacheDir is npm's own download cache in the package cache, shared
// by the installs of a crawl (npm checks every tarball's integrity).
const npmCacheDir = ".npm"

// installSpec is the resolving step of p's install (see npmlock.go): npm,
// with lifecycle scripts off, resolves p's dependency tree into a
// lockfile in a tmpfs, reaching only the registry through the proxy (git
// is hidden, so a git dependency fails; a URL or other host is refused by
// the proxy); cp then copies the lockfile out.
func (c *npmCache) installSpec(p *Package, out string) sandbox.Spec {
	npmArgs := []string{c.node, c.npmCLI, "install", "--package-lock-only", "--prefix", "/install", "--ignore-scripts", "--no-audit", "--no-fund",
		"--save-exact", "--omit=dev", "--no-update-notifier", "--loglevel=error", "--", p.Identifier + "@" + p.Version}
	script := `node=$1 checks=$2 npm=$3; shift 3
"$@" && "$node" -e "$checks" /install/package-lock.json "$npm" >/install/skip.json &&
cp /install/package-lock.json /install/skip.json /out/`
	npmRoot := filepath.Dir(filepath.Dir(c.npmCLI))
	args := append([]string{"/bin/sh", "-c", script, "sh", c.node, npmChecks, npmRoot}, npmArgs...)
	env := []string{
		"npm_config_registry=" + c.registry,
		"npm_config_cache=/npm-cache",
		"npm_config_proxy=" + c.proxy.URL(),
		"npm_config_https_proxy=" + c.proxy.URL(),
		"npm_config_noproxy=",
		"npm_config_userconfig=" + sandbox.Home + "/.npmrc", // none: nothing of the host's
		"npm_config_globalconfig=" + sandbox.Home + "/npmrc",
		"npm_config_update_notifier=false",
		"npm_config_prefer_offline=true", // see dropPackuments
		"npm_config_fund=false",
		"npm_config_audit=false",
	}
	env = append(env, c.confEnv...)
	mounts := append([]sandbox.Mount{
		{Host: filepath.Join(c.dir, npmCacheDir), Sandbox: "/npm-cache", Writable: true},
		{Host: out, Sandbox: "/out", Writable: true},
	}, c.mounts...)
	if c.hasCAs {
		mounts = append(mounts, sandbox.Mount{Host: filepath.Join(c.dir, caDir), Sandbox: caMount})
	}
	return sandbox.Spec{
		Args: args, Env: env, Network: true, Mounts: mounts,
		Tmpfs:  []sandbox.Tmpfs{installFolder(c.maxPackage)},
		Hide:   c.hide,
		Limits: sandbox.Limits{CPU: c.timeout, FileSize: c.maxPackage, Memory: c.memory},
	}
}

// installFolder is the tmpfs an npm install writes into: a MiB over the
// package bound, so that a package that fills it (npm carries on past a
// file it could not write whole) measures over the bound, and is refused,
// rather than kept truncated.
func installFolder(maxPackage int64) sandbox.Tmpfs {
	return sandbox.Tmpfs{Path: "/install", Size: maxPackage + 1<<20}
}

// MinSandboxMemory is the least sandbox memory bound (Options'
// Limits.Memory) under which packages of up to packageMax bytes can be
// installed: the sizes of an install's memory-backed folders, which must
// fit within it.
func MinSandboxMemory(packageMax int64) int64 {
	return sandbox.FolderBytes(sandbox.Limits{}, []sandbox.Tmpfs{installFolder(packageMax)})
}

// own makes folder dir the sandbox's: its host user writes it (root's
// sandbox runs as another user).
func (c *npmCache) own(dir string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	if uid := c.sb.HostUID(); uid != os.Getuid() {
		return os.Chown(dir, uid, uid)
	}
	return nil
}

// stripModes clears the set-user-id, set-group-id and sticky bits and
// the write bits of group and others of everything under dir.
func stripModes(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m := info.Mode()
		if m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || m.Perm()&0o022 != 0 {
			return os.Chmod(p, m.Perm()&^0o022)
		}
		return nil
	})
}

// maxPackageJSON caps an installed package's package.json read into
// memory: a real one is a few KiB.
const maxPackageJSON = 4 << 20

// entryPoint is the file node runs, relative to the install folder: the
// package's bin (the one named like the package when it has several), or
// its main. The install's files are read through its root, so no link in
// it reaches outside.
func entryPoint(prefix, identifier string) (string, error) {
	pkgDir := path.Join("node_modules", identifier)
	b, err := readInRoot(prefix, path.Join(pkgDir, "package.json"), maxPackageJSON)
	if err != nil {
		return "", fmt.Errorf("npm installed no %s: %v", identifier, err)
	}
	var pj struct {
		Bin  json.RawMessage `json:"bin"`
		Main string          `json:"main"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		return "", fmt.Errorf("%s/package.json: %v", identifier, err)
	}
	var rel string
	var one string
	var many map[string]string
	switch {
	case json.Unmarshal(pj.Bin, &one) == nil && one != "":
		rel = one
	case json.Unmarshal(pj.Bin, &many) == nil && len(many) > 0:
		base := identifier[strings.LastIndex(identifier, "/")+1:]
		if v, ok := many[base]; ok {
			rel = v
		} else {
			keys := make([]string, 0, len(many))
			for k := range many {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			rel = many[keys[0]]
		}
	case pj.Main != "":
		rel = pj.Main
	default:
		rel = "index.js"
	}
	main := path.Clean(path.Join(pkgDir, rel))
	if !strings.HasPrefix(main, pkgDir+"/") {
		return "", fmt.Errorf("%s: entry point %q leaves the package", identifier, rel)
	}
	root, err := os.OpenRoot(prefix)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if _, err := root.Stat(main); err != nil {
		return "", fmt.Errorf("%s: entry point %q: %v", identifier, rel, err)
	}
	return main, nil
}

func dirSize(dir string) (int64, error) {
	n, _, err := dirSizes(dir)
	return n, err
}

// dirSizes are the bytes of the files under dir, and those of them not
// linked from elsewhere (a link count of one): what the folder alone
// holds on disk once its other files are the package store's.
func dirSizes(dir string) (size, own int64, err error) {
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil {
			size += info.Size()
			if sys, ok := info.Sys().(*syscall.Stat_t); !ok || sys.Nlink <= 1 || info.IsDir() {
				own += info.Size()
			}
		}
		return nil
	})
	return size, own, err
}

// evict removes the least recently used installed packages not in use
// until the cache fits its bound, and leftovers of interrupted installs.
// The cache's size counts every file once: the package store's files
// (however many folders link them) and each folder's own files; a folder
// removed frees its own files, and the store's files it alone linked.
func (c *npmCache) evict() {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type folder struct {
		key  string
		own  int64
		used time.Time
	}
	var fs []folder
	var total, apparent int64
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.dir, e.Name(), completeFile))
		st, serr := os.Stat(filepath.Join(c.dir, e.Name(), completeFile))
		if err != nil || serr != nil {
			continue
		}
		var m struct {
			Size int64  `json:"size"`
			Own  *int64 `json:"own"`
		}
		_ = json.Unmarshal(b, &m)
		own := m.Size // a folder sealed before the store: all its own
		if m.Own != nil {
			own = *m.Own
		}
		fs = append(fs, folder{e.Name(), own, st.ModTime()})
		total += own
		apparent += max(m.Size, own)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].used.Before(fs[j].used) })
	c.mu.Lock()
	defer c.mu.Unlock()
	c.storeMu.Lock()
	defer c.storeMu.Unlock()
	if !c.storeKnown && c.store != nil {
		// The store holds no more than the folders link: while their
		// files fit counted once a folder, the store's size is not
		// needed (failed installs prune what they alone added).
		if apparent <= c.max {
			return
		}
		n, err := c.store.Size()
		if err != nil {
			return
		}
		c.storeBytes, c.storeKnown = n, true
	}
	total += c.storeBytes
	for _, f := range fs {
		if total <= c.max {
			break
		}
		if c.inUse[f.key] > 0 {
			continue
		}
		used, listed := usedBy(filepath.Join(c.dir, f.key))
		if os.RemoveAll(filepath.Join(c.dir, f.key)) != nil {
			continue
		}
		_ = os.Remove(c.recordPath(f.key))
		total -= f.own
		if c.store != nil {
			// Files only this folder linked go with it: those of the
			// versions it lists, or else any in the store.
			var freed int64
			if listed {
				freed = pruneUsed(c.store, filepath.Join(c.dir, manifestsDir), used)
			} else {
				freed, _ = c.store.Prune()
			}
			total -= freed
			c.storeBytes -= freed
		}
	}
}

// prepare makes the cache folder and npm's download cache in it, private
// to the sandbox's host user, and empties npm's download cache once it
// takes more than a quarter of the cache's bound (at the start of a
// crawl, when no install uses it).
func (c *npmCache) prepare() error {
	// Folders made on the way stay closed to listing but open to pass.
	if err := os.MkdirAll(c.dir, 0o711); err != nil {
		return err
	}
	if err := reachable(c.dir, c.sb.HostUID()); err != nil {
		return err
	}
	if err := c.own(c.dir); err != nil {
		return err
	}
	npmDir := filepath.Join(c.dir, npmCacheDir)
	if n, err := dirSize(npmDir); err == nil && n > c.max/4 {
		_ = os.RemoveAll(npmDir)
	}
	if err := os.MkdirAll(npmDir, 0o700); err != nil {
		return err
	}
	if err := c.own(npmDir); err != nil {
		return err
	}
	if err := dropPackuments(npmDir, time.Now().Add(-c.metadataMaxAge)); err != nil {
		return fmt.Errorf("npm's download cache: %w", err)
	}
	// The machine's CA files, copied where the sandbox's user reads
	// them (the originals may be closed to it), and shown read-only.
	env, err := c.conf.copyCAs(filepath.Join(c.dir, caDir))
	if err != nil {
		return fmt.Errorf("npm's configuration: %w", err)
	}
	c.hasCAs = len(env) > 0
	if c.store, err = openStore(filepath.Join(c.dir, storeDir)); err != nil {
		return fmt.Errorf("package store: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(c.dir, manifestsDir), 0o755); err != nil {
		return fmt.Errorf("package store: %w", err)
	}
	c.confEnv = env
	if c.conf.Registry != "" {
		c.confEnv = append(c.confEnv, "npm_config_strict_ssl="+strconv.FormatBool(c.conf.StrictSSL))
	}
	return nil
}

// reachable checks that the folders above dir let uid pass: bwrap, run
// as uid, finds the folders it shows by their paths.
func reachable(dir string, uid int) error {
	if uid == os.Getuid() {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		owner := int(st.Sys().(*syscall.Stat_t).Uid)
		if st.Mode().Perm()&0o001 == 0 && owner != uid {
			return fmt.Errorf("the sandbox runs as uid %d, which cannot pass %s (mode %v) to reach the package cache %s: give --package-cache under folders open to others (root's default, %s, is)",
				uid, p, st.Mode().Perm(), dir, rootCache)
		}
		if p == "/" {
			return nil
		}
	}
}

// rootCache is the package cache of root: root's home is closed to the
// user its sandboxes run as.
const rootCache = "/var/cache/atlas-reproduce/packages"

// cleanStale removes the temporary folders of installs an earlier crawl
// did not finish: those last changed before, long enough ago that no
// install sharing the cache can still be writing them.
func (c *npmCache) cleanStale(before time.Time) {
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		info, err := e.Info()
		if err == nil && strings.HasPrefix(e.Name(), ".install-") && info.ModTime().Before(before) {
			_ = os.RemoveAll(filepath.Join(c.dir, e.Name()))
		}
	}
}
