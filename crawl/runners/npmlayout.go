package runners

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/klauspost/compress/gzip"
	"golang.org/x/sync/errgroup"
)

// npmLayout lays out the tree of an npm lockfile (readLockfile) in an
// install folder from the package store, as npm's install would lay it
// out: each version's files under its folder (hard links to the store's),
// with npm's file modes, and the links of node_modules/.bin. A version
// the store has not unpacked (no manifest, or files pruned since) is
// fetched from the registry through the install's proxy, checked against
// the lockfile's integrity and unpacked into the store as it is written.
type npmLayout struct {
	store     *pkgStore
	manifests string       // folder of the unpacked versions' manifests
	client    *http.Client // through the registry-only proxy
	registry  *url.URL
	max       int64         // the bytes one install may lay out
	fetches   int           // tarballs fetched at once
	fetched   *atomic.Int64 // counts the tarballs fetched, when not nil

	laid  atomic.Int64 // bytes laid out
	added atomic.Int64 // bytes the store grew by

	mu      sync.Mutex     // guards used and partial
	used    []string       // the manifests of the versions laid out
	partial []manifestFile // the files of tarballs whose unpacking failed
}

// manifestsDir holds, in the package cache, what the store holds of each
// unpacked tarball, named by the tarball's integrity.
const manifestsDir = ".tarballs"

// tarballManifest lists the files of one unpacked tarball, relative to
// the package's folder: the store's file of each (content SHA-256, mode).
type tarballManifest struct {
	Files []manifestFile `json:"files"`
}

type manifestFile struct {
	Path string      `json:"p"`
	Sum  string      `json:"s"`
	Perm fs.FileMode `json:"m"`
	Size int64       `json:"n"`
}

// errUnpacked is a manifest whose store files are gone (pruned): the
// tarball is fetched again.
var errUnpacked = errors.New("the store no longer holds the version's files")

// lay lays out pkgs in root. A version that several folders hold is
// fetched once; optional ones that cannot be fetched are left out, as
// npm leaves them.
func (l *npmLayout) lay(ctx context.Context, root string, pkgs []lockPackage) error {
	first := map[string]bool{}
	var firsts, rest []lockPackage
	for _, p := range pkgs {
		if first[p.Integrity] {
			rest = append(rest, p)
			continue
		}
		first[p.Integrity] = true
		firsts = append(firsts, p)
	}
	// The first folder of each version fetches it if need be; the others
	// link what it unpacked.
	for _, round := range [][]lockPackage{firsts, rest} {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(max(1, l.fetches))
		for _, p := range round {
			g.Go(func() error {
				err := l.place(gctx, root, p)
				if err != nil && p.Optional && !errors.Is(err, errTooLarge) && gctx.Err() == nil {
					_ = os.RemoveAll(filepath.Join(root, p.Path))
					return nil
				}
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	for _, p := range pkgs {
		if _, err := os.Lstat(filepath.Join(root, p.Path)); err == nil {
			if err := linkBins(root, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// usesFile lists, in an install's folder, the manifests of the versions
// laid out in it: what eviction checks for store files no folder links
// any more, instead of walking the whole store.
const usesFile = ".atlas-tarballs"

// usedList is the manifests of the versions laid out so far.
func (l *npmLayout) usedList() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.used)
}

// recordUse writes usesFile into root.
func (l *npmLayout) recordUse(root string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	slices.Sort(l.used)
	b, err := json.Marshal(slices.Compact(l.used))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, usesFile), b, 0o644)
}

// pruneUsed removes the store files of the manifests used (an evicted
// folder's usesFile, read by usedBy before the folder was removed) that
// no folder links any more, and the manifests that no longer have all
// their files, and says how many bytes that freed.
func pruneUsed(store *pkgStore, manifests string, used []string) (freed int64) {
	for _, name := range used {
		if name != filepath.Base(name) {
			continue
		}
		mf := filepath.Join(manifests, name)
		m, err := readManifest(mf)
		if err != nil {
			continue
		}
		n, whole := pruneFiles(store, m.Files)
		freed += n
		if !whole {
			_ = os.Remove(mf)
		}
	}
	return freed
}

// pruneFiles removes the store's files of files that no folder links any
// more, says how many bytes that freed, and whether the store still holds
// every one of them.
func pruneFiles(store *pkgStore, files []manifestFile) (freed int64, whole bool) {
	whole = true
	for _, f := range files {
		sum, err := hex.DecodeString(f.Sum)
		if err != nil {
			whole = false
			continue
		}
		p := store.path(sum, f.Perm)
		st, err := os.Lstat(p)
		if err != nil {
			whole = false
			continue
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink == 1 && os.Remove(p) == nil {
			freed += st.Size()
			whole = false
		}
	}
	return freed, whole
}

// pruneUnpacked removes the store's files of tarballs whose unpacking
// failed part way (no manifest names them) that no folder links any more:
// call it once their folders are gone.
func (l *npmLayout) pruneUnpacked() (freed int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	freed, _ = pruneFiles(l.store, l.partial)
	l.partial = nil
	return freed
}

// usedBy reads folder dir's usesFile; ok is false without one (a folder
// not laid out from manifests: the caller prunes the whole store).
func usedBy(dir string) (used []string, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, usesFile))
	if err != nil || json.Unmarshal(b, &used) != nil {
		return nil, false
	}
	return used, true
}

// errTooLarge is an install past the package bound.
var errTooLarge = errors.New("too large")

// place lays out one folder of the tree: from the store when it holds
// the version, else fetched and unpacked.
func (l *npmLayout) place(ctx context.Context, root string, p lockPackage) error {
	algo, want, err := parseIntegrity(p.Integrity)
	if err != nil {
		return fmt.Errorf("%s@%s: %v", p.Path, p.Version, err)
	}
	dest := filepath.Join(root, filepath.FromSlash(p.Path))
	name := algo + "-" + hex.EncodeToString(want) + ".json"
	mf := filepath.Join(l.manifests, name)
	l.mu.Lock()
	l.used = append(l.used, name)
	l.mu.Unlock()
	if err := l.linkManifest(mf, dest); err == nil || !errors.Is(err, errUnpacked) {
		return err
	}
	_ = os.RemoveAll(dest)
	m, err := l.unpack(ctx, p, dest, algo, want)
	if err != nil {
		l.mu.Lock()
		l.partial = append(l.partial, m.Files...)
		l.mu.Unlock()
		_, name := p.folder()
		return fmt.Errorf("%s@%s: %w", name, p.Version, err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return outset.WriteFile(mf, b, 0o600)
}

// linkManifest links the files manifest file mf lists into dest. It
// returns errUnpacked when there is no manifest or the store misses one
// of its files.
func (l *npmLayout) linkManifest(mf, dest string) (err error) {
	m, err := readManifest(mf)
	if err != nil {
		return err
	}
	var linked int64
	defer func() {
		if err != nil && errors.Is(err, errUnpacked) {
			l.laid.Add(-linked) // fetched and counted again
		}
	}()
	for _, f := range m.Files {
		sum, err := hex.DecodeString(f.Sum)
		rel, ok := cleanTarPath("package/" + f.Path)
		if err != nil || !ok || rel != f.Path {
			return errUnpacked
		}
		if err := l.grow(f.Size); err != nil {
			return err
		}
		linked += f.Size
		to := filepath.Join(dest, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		_ = os.Remove(to)
		if err := os.Link(l.store.path(sum, f.Perm), to); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return errUnpacked
			}
			return err
		}
	}
	return nil
}

// readManifest reads manifest file mf; one missing or unreadable as a
// manifest is errUnpacked.
func readManifest(mf string) (tarballManifest, error) {
	var m tarballManifest
	b, err := os.ReadFile(mf)
	if errors.Is(err, fs.ErrNotExist) {
		return m, errUnpacked
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, errUnpacked
	}
	return m, nil
}

// grow counts n more bytes laid out, and fails past the package bound.
func (l *npmLayout) grow(n int64) error {
	if total := l.laid.Add(n); total > l.max {
		return fmt.Errorf("%w: the installed package takes more than the %d bytes allowed", errTooLarge, l.max)
	}
	return nil
}

// maxTarballEntries bounds the entries of one tarball: a real package
// has at most tens of thousands of files.
const maxTarballEntries = 200_000

// unpack fetches p's tarball and writes its files under dest with npm's
// modes, each made a link to the store's file as it is written, and
// checks the tarball against its integrity.
func (l *npmLayout) unpack(ctx context.Context, p lockPackage, dest, algo string, want []byte) (tarballManifest, error) {
	var m tarballManifest
	u, err := l.tarballURL(p.Resolved)
	if err != nil {
		return m, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return m, err
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if l.fetched != nil {
		l.fetched.Add(1)
	}
	h := newIntegrityHash(algo)
	body := io.TeeReader(io.LimitReader(resp.Body, l.max+1), h)
	zr, err := gzip.NewReader(body)
	if err != nil {
		return m, fmt.Errorf("tarball %s: %v", u, err)
	}
	bins := binTargets(p.Bin)
	tr := tar.NewReader(zr)
	seen := map[string]int{}
	npmignores := map[string]bool{}
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return m, fmt.Errorf("tarball %s: %v", u, err)
		}
		if n >= maxTarballEntries {
			return m, fmt.Errorf("tarball %s: more than %d entries", u, maxTarballEntries)
		}
		// npm's install keeps files and folders, and drops the first
		// path element ("package/"), links and devices.
		rel, ok := cleanTarPath(hdr.Name)
		if !ok || hdr.Typeflag != tar.TypeReg { // the reader reads the old TypeRegA as TypeReg
			continue
		}
		// As npm pack does, npm's install takes a .gitignore for the
		// folder's .npmignore, unless the tarball has one before it.
		switch path.Base(rel) {
		case ".npmignore":
			npmignores[rel] = true
		case ".gitignore":
			ni := strings.TrimSuffix(rel, ".gitignore") + ".npmignore"
			if npmignores[ni] {
				continue
			}
			rel = ni
		}
		perm := fs.FileMode(0o644) | fs.FileMode(hdr.Mode)&0o111
		if bins[rel] {
			perm |= 0o111
		}
		f, err := l.writeFile(dest, rel, tr, perm)
		if err != nil {
			return m, err
		}
		if i, dup := seen[rel]; dup {
			m.Files[i] = f // a later entry of the same name wins, as in npm's
		} else {
			seen[rel] = len(m.Files)
			m.Files = append(m.Files, f)
		}
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return m, err
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return m, fmt.Errorf("tarball %s: integrity %s-%s, the lockfile says %s", u, algo, base64.StdEncoding.EncodeToString(got), p.Integrity)
	}
	return m, nil
}

// writeFile writes one file of a tarball at dest/rel, counting it against
// the package bound as it is written, and makes it the store's.
func (l *npmLayout) writeFile(dest, rel string, r io.Reader, perm fs.FileMode) (manifestFile, error) {
	to := filepath.Join(dest, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return manifestFile{}, err
	}
	_ = os.Remove(to)
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return manifestFile{}, err
	}
	sh := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, sh, growWriter{l}), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return manifestFile{}, err
	}
	info, err := os.Lstat(to)
	if err != nil {
		return manifestFile{}, err
	}
	sum := sh.Sum(nil)
	storePerm := perm &^ 0o222
	how, err := l.store.adoptFile(to, info, sum, storePerm)
	if err != nil {
		return manifestFile{}, err
	}
	if how == adoptAdded {
		l.added.Add(n)
	}
	return manifestFile{Path: rel, Sum: hex.EncodeToString(sum), Perm: storePerm, Size: n}, nil
}

// growWriter counts what is written against the package bound.
type growWriter struct{ l *npmLayout }

func (w growWriter) Write(b []byte) (int, error) {
	if err := w.l.grow(int64(len(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// cleanTarPath is a tarball entry's path inside its package's folder,
// without its first element ("package/"); ok is false for one that names
// the folder itself or has a ".." element, which npm's tar refuses.
func cleanTarPath(name string) (string, bool) {
	_, rest, found := strings.Cut(strings.TrimLeft(strings.ReplaceAll(name, "\\", "/"), "/"), "/")
	if !found {
		return "", false
	}
	for _, e := range strings.Split(rest, "/") {
		if e == ".." {
			return "", false
		}
	}
	rel := path.Clean("/" + rest)[1:]
	return rel, rel != ""
}

// tarballURL is where the crawl fetches a lockfile's resolved tarball:
// on the registry npm is configured with. A tarball the public
// registry's packuments name is fetched from the configured registry
// instead, as npm does by default (replace-registry-host=npmjs); any
// other host is refused, as the install's proxy refuses it.
func (l *npmLayout) tarballURL(resolved string) (string, error) {
	u, err := url.Parse(resolved)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("%q is not a registry tarball (the crawl installs from the registry alone)", resolved)
	}
	if u.Host == "registry.npmjs.org" && l.registry.Host != u.Host {
		v := *l.registry
		v.Path = strings.TrimSuffix(l.registry.Path, "/") + u.Path
		v.RawPath = ""
		return v.String(), nil
	}
	if u.Scheme != l.registry.Scheme || u.Host != l.registry.Host {
		return "", fmt.Errorf("tarball %s is not on the registry %s", resolved, l.registry)
	}
	return u.String(), nil
}

// binTargets are the files a package's bin names, relative to its
// folder: npm makes them executable.
func binTargets(bin map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, target := range bin {
		if rel, ok := binTarget(target); ok {
			out[rel] = true
		}
	}
	return out
}

// binTarget cleans a bin's file as npm does: inside the package.
func binTarget(target string) (string, bool) {
	rel := path.Clean("/" + strings.ReplaceAll(target, "\\", "/"))[1:]
	return rel, rel != ""
}

// linkBins makes node_modules/.bin/NAME links of p's bins, beside p, as
// npm's install does.
func linkBins(root string, p lockPackage) error {
	nm, inNM := p.folder()
	binDir := filepath.Join(root, filepath.FromSlash(nm), ".bin")
	for name, target := range p.Bin {
		name = path.Base(strings.ReplaceAll(strings.ReplaceAll(name, "\\", "/"), ":", "/"))
		rel, ok := binTarget(target)
		if !ok || name == "." || name == "/" || name == ".." {
			continue
		}
		if err := os.MkdirAll(binDir, 0o755); err != nil {
			return err
		}
		err := os.Symlink("../"+inNM+"/"+rel, filepath.Join(binDir, name))
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// parseIntegrity picks the strongest hash of a subresource integrity
// string ("sha512-BASE64 sha1-BASE64"), as npm's ssri does.
func parseIntegrity(s string) (algo string, sum []byte, err error) {
	rank := map[string]int{"sha1": 1, "sha256": 2, "sha384": 3, "sha512": 4}
	for _, f := range strings.Fields(s) {
		a, b64, ok := strings.Cut(f, "-")
		if i := strings.IndexByte(b64, '?'); i >= 0 {
			b64 = b64[:i]
		}
		raw, derr := base64.StdEncoding.DecodeString(b64)
		if !ok || derr != nil || rank[a] == 0 || rank[a] <= rank[algo] {
			continue
		}
		algo, sum = a, raw
	}
	if algo == "" {
		return "", nil, fmt.Errorf("no integrity hash npm checks (%q)", s)
	}
	return algo, sum, nil
}

func newIntegrityHash(algo string) hash.Hash {
	switch algo {
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	case "sha384":
		return sha512.New384()
	}
	return sha512.New()
}
