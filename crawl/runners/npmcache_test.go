package runners

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPackageCacheEviction: the cache drops the least recently used
// packages not in use until it fits its bound.
func TestPackageCacheEviction(t *testing.T) {
	dir := t.TempDir()
	c := &npmCache{dir: dir, max: 250, inUse: map[string]int{"busy": 1}}
	for i, key := range []string{"busy", "old", "mid", "new"} {
		if err := os.MkdirAll(filepath.Join(dir, key), 0o755); err != nil {
			t.Fatal(err)
		}
		mark := filepath.Join(dir, key, completeFile)
		if err := os.WriteFile(mark, []byte(`{"main": "x", "size": 100}`), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Unix(int64(1000+i), 0)
		os.Chtimes(mark, when, when)
	}
	os.MkdirAll(filepath.Join(dir, ".install-123"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".install-456"), 0o755)
	old := time.Unix(500, 0)
	os.Chtimes(filepath.Join(dir, ".install-123"), old, old)
	c.cleanStale(time.Unix(900, 0))
	c.evict()
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{".install-456", "busy", "new"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// TestNPMCoordinates: only a package name and an exact version reach npm,
// never a path, URL, git remote, tag or range.
func TestNPMCoordinates(t *testing.T) {
	c := &npmCache{dir: t.TempDir()}
	for _, tc := range []struct{ id, version string }{
		{"../../etc", "1.0.0"}, {"file:/etc", "1.0.0"}, {"git+https://example.org/x.git", "1.0.0"},
		{"@scope/../x", "1.0.0"}, {"x", "latest"}, {"x", "^1.0.0"}, {"x", "1.0.0 || 2"}, {"x", "1.0.0/../../y"},
	} {
		_, err := c.acquire(context.Background(), &Package{RegistryType: RegistryNPM, Identifier: tc.id, Version: tc.version})
		var ie *installError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "not an") {
			t.Errorf("%s@%s: %v, want a refusal before npm runs", tc.id, tc.version, err)
		}
	}
}
