package runners

import (
	"os"
	"path/filepath"
	"testing"
)

func writeTree(t *testing.T, root string, files map[string]string, perm os.FileMode) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), perm); err != nil {
			t.Fatal(err)
		}
	}
}

func sameInode(t *testing.T, a, b string) bool {
	t.Helper()
	ia, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	ib, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(ia, ib)
}

// TestAdoptShares: two package folders with a common dependency hold its
// files as one inode; different content or mode stays apart; the store
// keeps a file while any folder links it, and Prune frees it after.
func TestPackageStoreAdopt(t *testing.T) {
	base := t.TempDir()
	s, err := openStore(filepath.Join(base, "store"))
	if err != nil {
		t.Fatal(err)
	}
	dep := map[string]string{"node_modules/dep/index.js": "module.exports = 1\n", "node_modules/dep/package.json": `{"name":"dep"}`}
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	writeTree(t, a, dep, 0o644)
	writeTree(t, a, map[string]string{"node_modules/a/index.js": "require('dep')\n"}, 0o644)
	writeTree(t, b, dep, 0o644)
	writeTree(t, b, map[string]string{"node_modules/b/index.js": "require('dep')\n", "node_modules/b/run.js": "module.exports = 1\n"}, 0o755)

	sa, err := s.Adopt(a)
	if err != nil || sa.Files != 3 || sa.Added != 3 || sa.Shared != 0 {
		t.Fatalf("first folder: %+v, %v; want 3 files added", sa, err)
	}
	sb, err := s.Adopt(b)
	if err != nil || sb.Files != 4 || sb.Shared != 2 || sb.Added != 2 || sb.SharedBytes != int64(len(dep["node_modules/dep/index.js"])+len(dep["node_modules/dep/package.json"])) {
		t.Fatalf("second folder: %+v, %v; want the dependency's 2 files shared", sb, err)
	}
	for _, f := range []string{"node_modules/dep/index.js", "node_modules/dep/package.json"} {
		if !sameInode(t, filepath.Join(a, f), filepath.Join(b, f)) {
			t.Errorf("%s: two inodes, want one hard-linked", f)
		}
	}
	// Same bytes, other mode: another file of the store.
	if sameInode(t, filepath.Join(a, "node_modules/dep/index.js"), filepath.Join(b, "node_modules/b/run.js")) {
		t.Error("an executable file shares the inode of a plain one")
	}
	if info, _ := os.Stat(filepath.Join(b, "node_modules/b/run.js")); info.Mode().Perm() != 0o555 {
		t.Errorf("mode %v, want 0555 (read-only, still executable)", info.Mode().Perm())
	}
	// Adopting again changes nothing.
	if again, err := s.Adopt(b); err != nil || again.Added != 0 || again.Shared != 4 || again.SharedBytes != 0 {
		t.Errorf("again: %+v, %v", again, err)
	}
	size, _ := s.Size()
	if freed, err := s.Prune(); err != nil || freed != 0 {
		t.Fatalf("prune with both folders: freed %d, %v; want 0", freed, err)
	}
	if err := os.RemoveAll(a); err != nil {
		t.Fatal(err)
	}
	freed, err := s.Prune()
	if err != nil || freed != int64(len("require('dep')\n")) {
		t.Fatalf("prune without a: freed %d, %v; want only a's own file", freed, err)
	}
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	freed2, err := s.Prune()
	if after, _ := s.Size(); err != nil || after != 0 || freed+freed2 != size {
		t.Fatalf("prune without either: %d bytes left, freed %d+%d of %d, %v", after, freed, freed2, size, err)
	}
}
