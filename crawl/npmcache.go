package crawl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
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
	npm        string
	max        int64 // the whole cache
	maxPackage int64 // one installed package
	timeout    time.Duration

	mu     sync.Mutex
	inUse  map[string]int
	flight map[string]*sync.Mutex // one install of a package at a time
}

// installed is a package ready to run: its cache folder and the entry
// point's path inside it.
type installed struct {
	key, dir, main string
	cached         bool
}

// installError is an install that failed; the package becomes a record
// of kind install.
type installError struct{ err error }

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
		return installed{}, &installError{fmt.Errorf("%q is not an npm package name", p.Identifier)}
	}
	if !npmVersion.MatchString(p.Version) {
		return installed{}, &installError{fmt.Errorf("%q is not an exact npm version", p.Version)}
	}
	key := c.key(p)
	c.mu.Lock()
	if c.flight == nil {
		c.flight, c.inUse = map[string]*sync.Mutex{}, map[string]int{}
	}
	fl := c.flight[key]
	if fl == nil {
		fl = &sync.Mutex{}
		c.flight[key] = fl
	}
	c.inUse[key]++
	c.mu.Unlock()
	fl.Lock()
	defer fl.Unlock()
	dir := filepath.Join(c.dir, key)
	if main, err := readComplete(dir); err == nil {
		now := time.Now()
		_ = os.Chtimes(filepath.Join(dir, completeFile), now, now)
		return installed{key: key, dir: dir, main: main, cached: true}, nil
	}
	in, err := c.install(ctx, p, dir)
	if err != nil {
		c.release(key)
		return installed{}, err
	}
	in.key = key
	c.evict()
	return in, nil
}

func (c *npmCache) release(key string) {
	c.mu.Lock()
	c.inUse[key]--
	c.mu.Unlock()
}

func readComplete(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, completeFile))
	if err != nil {
		return "", err
	}
	var m struct {
		Main string `json:"main"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Main == "" {
		return "", errors.New("incomplete")
	}
	return m.Main, nil
}

// install runs npm into a temporary folder of the cache and renames it to
// dir once the package is known to fit and to have an entry point.
func (c *npmCache) install(ctx context.Context, p *Package, dir string) (installed, error) {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return installed{}, err
	}
	_ = os.RemoveAll(dir) // a folder without its mark is a torn install
	tmp, err := os.MkdirTemp(c.dir, ".install-")
	if err != nil {
		return installed{}, err
	}
	defer os.RemoveAll(tmp)
	// The folders are read by the sandbox's unprivileged user.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return installed{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.npm, "install", "--prefix", tmp, "--ignore-scripts", "--no-audit", "--no-fund",
		"--no-save", "--no-package-lock", "--omit=dev", "--no-update-notifier", "--loglevel=error",
		p.Identifier+"@"+p.Version)
	// npm's own download cache lives in the temporary folder: the cache's
	// bound covers everything the crawl puts on disk.
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(tmp, ".npm"), "npm_config_update_notifier=false")
	cmd.Dir = tmp
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, max: 4 << 10}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return installed{}, &installError{fmt.Errorf("npm install did not finish within %v", c.timeout)}
		}
		return installed{}, &installError{fmt.Errorf("npm install %s@%s: %v: %s", p.Identifier, p.Version, err, firstLines(stderr.String(), 3))}
	}
	_ = os.RemoveAll(filepath.Join(tmp, ".npm"))
	main, err := entryPoint(tmp, p.Identifier)
	if err != nil {
		return installed{}, &installError{err}
	}
	size, err := dirSize(tmp)
	if err != nil {
		return installed{}, err
	}
	if size > c.maxPackage {
		return installed{}, &installError{fmt.Errorf("installed package takes %d bytes, more than the %d allowed", size, c.maxPackage)}
	}
	mark, _ := json.Marshal(map[string]any{"main": main, "size": size})
	if err := os.WriteFile(filepath.Join(tmp, completeFile), mark, 0o644); err != nil {
		return installed{}, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return installed{}, err
	}
	return installed{dir: dir, main: main}, nil
}

// entryPoint is the file node runs, relative to the install folder: the
// package's bin (the one named like the package when it has several), or
// its main.
func entryPoint(prefix, identifier string) (string, error) {
	pkgDir := path.Join("node_modules", identifier)
	b, err := os.ReadFile(filepath.Join(prefix, filepath.FromSlash(pkgDir), "package.json"))
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
	if _, err := os.Stat(filepath.Join(prefix, filepath.FromSlash(main))); err != nil {
		return "", fmt.Errorf("%s: entry point %q: %v", identifier, rel, err)
	}
	return main, nil
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// evict removes the least recently used installed packages not in use
// until the cache fits its bound, and leftovers of interrupted installs.
func (c *npmCache) evict() {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type folder struct {
		key  string
		size int64
		used time.Time
	}
	var fs []folder
	var total int64
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
			Size int64 `json:"size"`
		}
		_ = json.Unmarshal(b, &m)
		fs = append(fs, folder{e.Name(), m.Size, st.ModTime()})
		total += m.Size
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].used.Before(fs[j].used) })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range fs {
		if total <= c.max {
			return
		}
		if c.inUse[f.key] > 0 {
			continue
		}
		if os.RemoveAll(filepath.Join(c.dir, f.key)) == nil {
			total -= f.size
		}
	}
}

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

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "... ("+strconv.Itoa(len(lines)-n)+" more lines)")
	}
	return strings.Join(lines, " | ")
}
