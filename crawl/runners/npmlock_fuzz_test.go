package runners

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadLockfile: whatever npm's lockfile holds, the folders to lay out
// are clean paths under node_modules, never one that leaves the install.
func FuzzReadLockfile(f *testing.F) {
	f.Add([]byte(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {"a": "1"}}, "node_modules/a": {"dependencies": {"b": "1"}}, "node_modules/a/node_modules/b": {}}}`))
	f.Add([]byte(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {"@s/x": "1"}}, "node_modules/@s/x": {"bin": {"x": "../../x"}}}}`))
	f.Add([]byte(`{"lockfileVersion": 2, "packages": {"": {}, "node_modules/../x": {}}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, lock []byte) {
		if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), lock, 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs, err := readLockfile(dir, []string{"node_modules/skipped"})
		if err != nil {
			return
		}
		for _, p := range pkgs {
			if !lockPath(p.Path) || filepath.Clean(p.Path) != p.Path || strings.HasPrefix(p.Path, "/") || strings.Contains("/"+p.Path+"/", "/../") {
				t.Fatalf("folder %q leaves node_modules", p.Path)
			}
		}
	})
}

// FuzzCleanTarPath: a tarball entry's path inside its folder is never
// absolute and never climbs out.
func FuzzCleanTarPath(f *testing.F) {
	for _, s := range []string{"package/index.js", "package/../x", "/package/a/../../b", "package\\..\\x", "p/./a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		rel, ok := cleanTarPath(name)
		if !ok {
			return
		}
		if rel == "" || strings.HasPrefix(rel, "/") || rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "/../") || filepath.Clean(rel) != rel {
			t.Fatalf("cleanTarPath(%q) = %q", name, rel)
		}
	})
}
