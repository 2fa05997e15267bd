package runners

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
)

// TestBundlesLinkChain: a chain of links whose texts each stay inside the
// bundle on paper, but which together climb out of it to a file of the
// host, is refused at unpacking; and the manifest is read through the
// bundle's root, so a link planted after unpacking cannot redirect it.
func TestBundlesLinkChain(t *testing.T) {
	base := t.TempDir()
	// The secret lies two folders above the bundle: the chain below ends
	// there, with no ".." left in its text after cleaning.
	secret := filepath.Join(base, "a", "b", "secret.json")
	work := filepath.Join(base, "a", "b", "c")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte(`{"server":{"mcp_config":{"command":"SECRET"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// d1/.../d19/l -> ../ (inside on paper: the parent of d19 is d18).
	var dirs []string
	for i := 1; i <= 19; i++ {
		dirs = append(dirs, "d"+string(rune('a'+i-1)))
	}
	deep := strings.Join(dirs, "/")
	files := []crawltest.BundleFile{{Name: deep + "/l", Body: []byte("../"), Mode: os.ModeSymlink | 0o777}}
	// manifest.json -> deep/l/ + ../ x 20 + ... to the secret, inside on
	// paper (l taken as a folder name), outside in fact (l is a link up).
	// On paper deep/l/ + ../ x 20 is the bundle itself; in fact deep/l is
	// d18, 18 folders down, so 20 steps up leave the bundle by two.
	target := deep + "/l/" + strings.Repeat("../", 20) + "secret.json"
	files = append(files, crawltest.BundleFile{Name: "manifest.json", Body: []byte(target), Mode: os.ModeSymlink | 0o777})
	zipPath := filepath.Join(work, "b.mcpb")
	if err := os.WriteFile(zipPath, crawltest.MakeBundle(t, files...), 0o644); err != nil {
		t.Fatal(err)
	}
	err := unpackBundle(zipPath, filepath.Join(work, "bundle"), 1<<20)
	if err == nil || !strings.Contains(err.Error(), "links out of the bundle") {
		t.Fatalf("unpackBundle of a link chain out of the bundle: err = %v, want a refusal", err)
	}
	if testing.Verbose() {
		t.Logf("refused: %v", err)
	}

	// Whatever the unpacking let through, the read stays inside.
	dir := filepath.Join(base, "planted")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	if b, err := readInRoot(dir, "manifest.json", maxManifest); err == nil {
		t.Fatalf("readInRoot followed a link out of its folder and read %q", b)
	}
	// A link inside is followed.
	if err := os.WriteFile(filepath.Join(dir, "real.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", filepath.Join(dir, "inside.json")); err != nil {
		t.Fatal(err)
	}
	if b, err := readInRoot(dir, "inside.json", maxManifest); err != nil || string(b) != "{}" {
		t.Fatalf("readInRoot of a link inside: %q, %v", b, err)
	}
}

// TestBundlesCommandPrefix: a command that names the bundle's folder only
// before "..", and a user_config default doing the same, is not the
// bundle's own program.
func TestBundlesCommandPrefix(t *testing.T) {
	pr := &Set{}
	for _, tc := range []struct {
		manifest string
		want     string // argv[0], or "" for a refusal
	}{
		{`{"server":{"mcp_config":{"command":"${__dirname}/../usr/bin/env"}}}`, ""},
		{`{"server":{"mcp_config":{"command":"${user_config.sh}"}},"user_config":{"sh":{"default":"/bundle/../bin/sh"}}}`, ""},
		{`{"server":{"mcp_config":{"command":"${__dirname}/server/../server/run"}}}`, "/bundle/server/run"},
	} {
		var m bundleManifest
		if err := json.Unmarshal([]byte(tc.manifest), &m); err != nil {
			t.Fatal(err)
		}
		argv, _, _, why := pr.bundleCommand(&m)
		switch {
		case tc.want == "" && why == "":
			t.Errorf("%s ran as the bundle's own program: argv %q", tc.manifest, argv)
		case tc.want != "" && (why != "" || len(argv) == 0 || argv[0] != tc.want):
			t.Errorf("%s: argv %q, why %q; want argv[0] %q", tc.manifest, argv, why, tc.want)
		}
	}
}
