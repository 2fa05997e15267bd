package crawl

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

type bundleFile struct {
	name string
	body []byte
	mode os.FileMode
}

func makeBundle(t testing.TB, files ...bundleFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func bundleSum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestCrawlBundles: an MCPB bundle is fetched from its URL (a same-host
// redirect followed, another host's refused), checked against its
// fileSha256 (a mismatch is recorded and never run), unpacked with no
// entry leaving its folder, and its manifest's server run as the manifest
// says, its declared tools ignored.
func TestCrawlBundles(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	manifest := `{"manifest_version": "0.2", "name": "tiny", "version": "1.0.0",
  "server": {"type": "binary", "entry_point": "server/stdioserver",
    "mcp_config": {"command": "${__dirname}/server/stdioserver", "args": ["from-manifest", "${user_config.level}"], "env": {"MODE": "bundle"}}},
  "user_config": {"level": {"type": "string", "default": "7"}},
  "tools": [{"name": "declared_only", "description": "never trusted"}]}`
	good := makeBundle(t, bundleFile{name: "manifest.json", body: []byte(manifest)},
		bundleFile{name: "server/stdioserver", body: stdioServer(t), mode: 0o755},
		bundleFile{name: "server/link", body: []byte("stdioserver"), mode: os.ModeSymlink | 0o777})
	evil := makeBundle(t, bundleFile{name: "manifest.json", body: []byte(manifest)}, bundleFile{name: "../../../../tmp/atlas-bundle-evil", body: []byte("x")})
	away := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(good) }))
	var served atomic.Int64
	host := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good.mcpb", "/mismatch.mcpb":
			served.Add(1)
			w.Write(good)
		case "/latest.mcpb":
			http.Redirect(w, r, "/good.mcpb", http.StatusFound)
		case "/away.mcpb":
			http.Redirect(w, r, away.URL+"/good.mcpb", http.StatusFound)
		case "/evil.mcpb":
			w.Write(evil)
		default:
			http.NotFound(w, r)
		}
	}))
	bundle := func(p, sum string) *Package {
		return &Package{RegistryType: RegistryMCPB, Identifier: host.URL + p, FileSHA256: sum, Transport: TransportStdio}
	}
	ok := bundle("/latest.mcpb", bundleSum(good))
	mismatch := bundle("/mismatch.mcpb", strings.Repeat("0", 64))
	redirected := bundle("/away.mcpb", bundleSum(good))
	slip := bundle("/evil.mcpb", bundleSum(evil))
	var cands []Candidate
	for _, p := range []*Package{ok, mismatch, redirected, slip} {
		cands = append(cands, Candidate{Package: p, Record: packageRecord(p, "test", "io.test/"+p.Identifier, "1.0.0")})
	}
	cache := sharedCache(t)
	for run := range 2 {
		opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
			Probe: ProbeOptions{Timeout: crawlTimeout}, Packages: PackageOptions{Cache: cache}}
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatal(err)
		}
		servers := readServers(t, opt.Out)
		s := servers[ok.ID()]
		if !s.Reachable {
			t.Fatalf("run %d: %s: %s: %s", run, ok.ID(), s.ErrorKind, s.Error)
		}
		for _, n := range []string{"echo", "uid_1000", "argv_from-manifest_7", "mode_bundle", "cwd_.bundle"} {
			if !slices.Contains(s.tools, n) {
				t.Errorf("run %d: tools %v lack %s", run, s.tools, n)
			}
		}
		if slices.Contains(s.tools, "declared_only") {
			t.Errorf("the manifest's declared tools were trusted: %v", s.tools)
		}
		if s.Runner == nil || s.Runner.Runner != RegistryMCPB || s.Runner.Resolved != "sha256:"+bundleSum(good) {
			t.Errorf("runner %+v", s.Runner)
		}
		for _, tc := range []struct {
			p    *Package
			want string
		}{{mismatch, "fileSha256 mismatch"}, {redirected, "own host only"}, {slip, "escapes the bundle"}} {
			if s := servers[tc.p.ID()]; s.Reachable || s.ErrorKind != KindInstall || !strings.Contains(s.Error, tc.want) {
				t.Errorf("run %d: %s: %s %q, want install with %q", run, tc.p.ID(), s.ErrorKind, s.Error, tc.want)
			}
		}
	}
	if _, err := os.Stat("/tmp/atlas-bundle-evil"); err == nil {
		t.Error("a bundle entry was written outside its folder")
	}
	// The good bundle came once (then from the cache); the mismatched
	// one each time, since it is never kept.
	if n := served.Load(); n != 3 {
		t.Errorf("bundles served %d times, want 3", n)
	}
}

// httpBytes serves b at every path.
type httpBytes []byte

func (b httpBytes) ServeHTTP(w http.ResponseWriter, _ *http.Request) { w.Write(b) }
