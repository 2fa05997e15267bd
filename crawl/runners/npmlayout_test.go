package runners

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"

	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
)

// TestNPMLayoutMatchesNPM: the crawl lays out an installed package's
// folder as npm's own install does: the same files with the same
// contents and modes and the same links of node_modules/.bin, a version
// the tree needs twice nested where npm nests it, an optional dependency
// for another platform left out with what only it needs, a .gitignore
// taken for .npmignore, a link in a tarball dropped. npm itself, run
// outside the sandbox on the same registry, is the reference.
func TestNPMLayoutMatchesNPM(t *testing.T) {
	npmtest.NeedSandbox(t)
	top := npmtest.Package{Name: "tiny-top", Version: "1.0.0", Prelude: "serve();",
		Dependencies:         map[string]string{"tiny-dep": "^1.0.0", "tiny-b": "1.0.0"},
		OptionalDependencies: map[string]string{"tiny-mac": "1.0.0"},
		Files: []npmtest.File{
			{Name: ".gitignore", Body: []byte("node_modules\n"), Mode: 0o644},
			{Name: "docs/.npmignore", Body: []byte("a\n"), Mode: 0o644},
			{Name: "docs/.gitignore", Body: []byte("b\n"), Mode: 0o644},
			{Name: "lib/run.sh", Body: []byte("#!/bin/sh\n"), Mode: 0o755},
			{Name: "lib/private.txt", Body: []byte("p\n"), Mode: 0o600},
			{Name: "link", Link: "server.js"},
		}}
	reg := npmtest.NewRegistry(t, []npmtest.Package{
		{Name: "tiny-dep", Version: "1.0.0"},
		{Name: "tiny-dep", Version: "2.0.0"},
		{Name: "tiny-b", Version: "1.0.0", Dependencies: map[string]string{"tiny-dep": "^2.0.0"}},
		{Name: "tiny-mac", Version: "1.0.0", OS: []string{"darwin"}, Dependencies: map[string]string{"tiny-maconly": "1.0.0"}},
		{Name: "tiny-maconly", Version: "1.0.0"},
		top,
	}, nil)
	npmtest.Use(t, reg.URL)

	cache := crawltest.CacheDir(t)
	for id, rec := range runAll(t, Options{Cache: cache}, crawlTimeout, 4<<20, "npm:tiny-top@1.0.0") {
		if !rec.Reachable {
			t.Fatalf("%s: %s: %s", id, rec.ErrorKind, rec.Error)
		}
	}
	var c npmCache
	crawled := treeOf(t, filepath.Join(cache, c.key(&Package{Identifier: "tiny-top", Version: "1.0.0"}), "node_modules"))

	direct := t.TempDir()
	cmd := exec.Command("npm", "install", "--prefix", direct, "--ignore-scripts", "--no-audit", "--no-fund", "--no-save",
		"--no-package-lock", "--omit=dev", "--loglevel=error", "tiny-top@1.0.0")
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(t.TempDir(), "npm"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v: %s", err, out)
	}
	want := treeOf(t, filepath.Join(direct, "node_modules"))
	delete(want, ".package-lock.json") // npm's record of its own install

	for _, must := range []string{"tiny-b/node_modules/tiny-dep/package.json", "tiny-top/.npmignore", ".bin/tiny-top"} {
		if _, ok := want[must]; !ok {
			t.Fatalf("npm's own install has no %s: the test's tree does not say what it should", must)
		}
	}
	for _, p := range []string{"tiny-mac/package.json", "tiny-maconly/package.json", "tiny-top/link"} {
		if _, ok := want[p]; ok {
			t.Fatalf("npm's own install has %s: the test's tree does not say what it should", p)
		}
	}
	var diffs []string
	for _, p := range sortedKeys(want, crawled) {
		if want[p] != crawled[p] {
			diffs = append(diffs, fmt.Sprintf("%s: npm %q, crawl %q", p, want[p], crawled[p]))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("the crawl's install differs from npm's:\n%s", strings.Join(diffs, "\n"))
	}
}

// treeOf describes every file and link under dir: a file's mode bits
// other than write (the store's files are read-only) and content hash, a
// link's target.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = "link " + target
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		sum := sha256.Sum256(b)
		out[rel] = fmt.Sprintf("%o %s", info.Mode().Perm()&0o555, hex.EncodeToString(sum[:8]))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sortedKeys(ms ...map[string]string) []string {
	var keys []string
	for _, m := range ms {
		for k := range m {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// TestNPMLayoutStore: a version is checked against its integrity, counted
// against the package bound as it is written, and fetched again when the
// store no longer holds its files; held, it is linked, not fetched.
func TestNPMLayoutStore(t *testing.T) {
	reg := npmtest.NewRegistry(t, []npmtest.Package{{Name: "tiny-x", Version: "1.0.0",
		Files: []npmtest.File{{Name: "data.bin", Size: 64 << 10, Mode: 0o644}}}}, nil)
	resolved := reg.URL + "tarballs/tiny-x-1.0.0.tgz"
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	resp, err := client.Get(resolved)
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(tgz)
	integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	cache := t.TempDir()
	store, err := openStore(filepath.Join(cache, storeDir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, manifestsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	regURL, _ := url.Parse(reg.URL)
	lay := func(integrity string, max int64) (string, error) {
		root := t.TempDir()
		l := &npmLayout{store: store, manifests: filepath.Join(cache, manifestsDir), client: client,
			registry: regURL, max: max, fetches: 2}
		err := l.lay(context.Background(), root, []lockPackage{{Path: "node_modules/tiny-x", Version: "1.0.0", Resolved: resolved, Integrity: integrity}})
		if err != nil {
			// As a failed install: its folder goes, then what it alone
			// put in the store.
			_ = os.RemoveAll(root)
			l.pruneUnpacked()
			if n, err := store.Size(); err != nil || n != 0 {
				t.Errorf("a failed layout left %d bytes in the store (%v)", n, err)
			}
		}
		return root, err
	}
	fetched := reg.Tarballs.Load()

	bad := sha512.Sum512([]byte("other"))
	if _, err := lay("sha512-"+base64.StdEncoding.EncodeToString(bad[:]), 1<<20); err == nil || !strings.Contains(err.Error(), "integrity") {
		t.Errorf("a tarball that is not the lockfile's: %v, want an integrity error", err)
	}
	if _, err := lay(integrity, 32<<10); !errors.Is(err, errTooLarge) {
		t.Errorf("64 KiB under a bound of 32 KiB: %v, want errTooLarge", err)
	}
	first, err := lay(integrity, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	second, err := lay(integrity, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if n := reg.Tarballs.Load() - fetched; n != 3 {
		t.Errorf("%d fetches, want 3: the held version is linked, not fetched again", n)
	}
	a, errA := os.Stat(filepath.Join(first, "node_modules/tiny-x/data.bin"))
	b, errB := os.Stat(filepath.Join(second, "node_modules/tiny-x/data.bin"))
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		t.Fatalf("the two layouts do not share the store's file (%v, %v)", errA, errB)
	}
	for _, root := range []string{first, second} {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
	}
	if freed, err := store.Prune(); err != nil || freed < 64<<10 {
		t.Fatalf("prune freed %d bytes (%v)", freed, err)
	}
	third, err := lay(integrity, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if n := reg.Tarballs.Load() - fetched; n != 4 {
		t.Errorf("%d fetches, want 4: a pruned version is fetched again", n)
	}
	if st, err := os.Stat(filepath.Join(third, "node_modules/tiny-x/data.bin")); err != nil || st.Size() != 64<<10 {
		t.Errorf("after the refetch: %v", err)
	}
}

func TestReadLockfile(t *testing.T) {
	for _, tc := range []struct {
		name, lock string
		skip       []string
		want       []string
		err        string
	}{
		{name: "tree", lock: `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"a": "1", "b": "1"}},
			"node_modules/a": {"dependencies": {"c": "1"}, "optionalDependencies": {"m": "1"}},
			"node_modules/a/node_modules/c": {}, "node_modules/c": {}, "node_modules/b": {"peerDependencies": {"c": "1"}},
			"node_modules/m": {"optional": true, "dependencies": {"only-m": "1"}}, "node_modules/only-m": {"optional": true},
			"node_modules/a/node_modules/bundled": {"inBundle": true}, "node_modules/dev": {"dev": true}}}`,
			skip: []string{"node_modules/m"},
			want: []string{"node_modules/a", "node_modules/a/node_modules/c", "node_modules/b", "node_modules/c"}},
		{name: "scoped", lock: `{"lockfileVersion": 2, "packages": {"": {"dependencies": {"@s/x": "1"}}, "node_modules/@s/x": {"dependencies": {"y": "1"}}, "node_modules/@s/x/node_modules/y": {}}}`,
			want: []string{"node_modules/@s/x", "node_modules/@s/x/node_modules/y"}},
		{name: "leaves the tree", lock: `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/../../etc": {}}}`, err: "not a folder under node_modules"},
		{name: "not node_modules", lock: `{"lockfileVersion": 3, "packages": {"": {}, "lib/x": {}}}`, err: "not a folder under node_modules"},
		{name: "link", lock: `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"a": "1"}}, "node_modules/a": {"link": true}}}`, err: "links to a folder"},
		{name: "version 1", lock: `{"lockfileVersion": 1, "dependencies": {}}`, err: "version 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(tc.lock), 0o644); err != nil {
				t.Fatal(err)
			}
			pkgs, err := readLockfile(dir, tc.skip)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pkgs {
				got = append(got, p.Path)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCleanTarPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"package/index.js", "index.js", true},
		{"other/lib/a.js", "lib/a.js", true},
		{"/package/x", "x", true},
		{"package\\lib\\b.js", "lib/b.js", true},
		{"package/./lib//c.js", "lib/c.js", true},
		{"package/../etc/passwd", "", false},
		{"package/lib/../../x", "", false},
		{"package/", "", false},
		{"package", "", false},
	} {
		got, ok := cleanTarPath(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("cleanTarPath(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
