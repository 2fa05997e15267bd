package crawl

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ocitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/pypitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// crawlCandidates crawls packages into a fresh folder and returns the
// records by server id (without their tools: a crawl none of whose
// servers answered has no tool lines).
func crawlCandidates(t *testing.T, allowPrivate bool, opt runners.Options, pkgs ...*runners.Package) map[string]ServerRecord {
	t.Helper()
	var cands []Candidate
	for _, p := range pkgs {
		cands = append(cands, Candidate{Package: p, Record: runners.PackageRecord(p, "test", "io.test/"+p.Identifier, "1.0.0")})
	}
	if opt.Cache == "" {
		opt.Cache = sharedCache(t)
	}
	o := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: allowPrivate, OmitElapsed: true,
		Probe: probe.Options{Timeout: crawlTimeout}, Packages: opt}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got := map[string]ServerRecord{}
	for _, l := range gunzipLines(t, readAll(t, o.Out)["servers.jsonl.gz"]) {
		var s ServerRecord
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		got[s.ServerID] = s
	}
	return got
}

// TestPackagesPolicyRefusalsBlocked: an image or a bundle that the
// address policy refuses (plain HTTP to a loopback host, or any
// connection to one, without --allow-private) is a blocked record, as a
// refused remote is; what is refused for another reason stays install.
func TestPackagesPolicyRefusalsBlocked(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	reg := ocitest.NewRegistry(t, "")
	reg.Push(t, "acme/server", "1.0", serverImage(t, "127.0.0.1:1"))
	bundle := crawltest.MakeBundle(t, crawltest.BundleFile{Name: "manifest.json", Body: []byte(`{"server": {"type": "binary", "entry_point": "s"}}`)})
	plain := crawltest.Serve(t, httpBytes(bundle))
	tlsSrv := httptest.NewTLSServer(httpBytes(bundle))
	t.Cleanup(tlsSrv.Close)
	image := &runners.Package{RegistryType: runners.RegistryOCI, Identifier: reg.Host + "/acme/server:1.0", Transport: probe.TransportStdio}
	plainBundle := &runners.Package{RegistryType: runners.RegistryMCPB, Identifier: plain.URL + "/b.mcpb", FileSHA256: crawltest.BundleSum(bundle), Transport: probe.TransportStdio}
	tlsBundle := &runners.Package{RegistryType: runners.RegistryMCPB, Identifier: tlsSrv.URL + "/b.mcpb", FileSHA256: crawltest.BundleSum(bundle), Transport: probe.TransportStdio}
	ftpBundle := &runners.Package{RegistryType: runners.RegistryMCPB, Identifier: "ftp://127.0.0.1/b.mcpb", FileSHA256: crawltest.BundleSum(bundle), Transport: probe.TransportStdio}
	servers := crawlCandidates(t, false, runners.Options{}, image, plainBundle, tlsBundle, ftpBundle)
	for _, tc := range []struct {
		p    *runners.Package
		kind string
	}{{image, probe.KindBlocked}, {plainBundle, probe.KindBlocked}, {tlsBundle, probe.KindBlocked}, {ftpBundle, probe.KindInstall}} {
		if s := servers[tc.p.ID()]; s.Reachable || s.ErrorKind != tc.kind {
			t.Errorf("%s: %s %q, want %s", tc.p.ID(), s.ErrorKind, s.Error, tc.kind)
		}
	}
}

// TestBundlesUncheckedDigest: a bundle whose entry names no fileSha256
// runs, and its record says that nothing checked it.
func TestBundlesUncheckedDigest(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	manifest := `{"server": {"type": "binary", "entry_point": "server/stdioserver"}}`
	b := crawltest.MakeBundle(t, crawltest.BundleFile{Name: "manifest.json", Body: []byte(manifest)},
		crawltest.BundleFile{Name: "server/stdioserver", Body: crawltest.StdioServer(t), Mode: 0o755})
	host := crawltest.Serve(t, httpBytes(b))
	checked := &runners.Package{RegistryType: runners.RegistryMCPB, Identifier: host.URL + "/checked.mcpb", FileSHA256: crawltest.BundleSum(b), Transport: probe.TransportStdio}
	unchecked := &runners.Package{RegistryType: runners.RegistryMCPB, Identifier: host.URL + "/unchecked.mcpb", Transport: probe.TransportStdio}
	servers := crawlCandidates(t, true, runners.Options{}, checked, unchecked)
	for _, tc := range []struct {
		p    *runners.Package
		want bool
	}{{checked, false}, {unchecked, true}} {
		s := servers[tc.p.ID()]
		if !s.Reachable || s.Runner == nil {
			t.Fatalf("%s: %s %q, runner %+v", tc.p.ID(), s.ErrorKind, s.Error, s.Runner)
		}
		if s.Runner.UncheckedDigest != tc.want {
			t.Errorf("%s: unchecked_digest %v, want %v", tc.p.ID(), s.Runner.UncheckedDigest, tc.want)
		}
	}
}

// TestCrawlPyPIScriptName: a wheel whose only console script is named
// "../../../tmp/x" is an install record, not a server run as /tmp/x.
func TestCrawlPyPIScriptName(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	testenv.Need(t, "python3", "the runtime of PyPI packages")
	ix := pypitest.Serve(t, pypitest.Dist{Project: "tiny-climb", Version: "1.0", Files: map[string]string{"tiny_climb/__init__.py": pyServer},
		ConsoleScripts: map[string]string{"../../../tmp/x": "tiny_climb:main"}})
	t.Setenv("PIP_INDEX_URL", ix.URL)
	p := &runners.Package{RegistryType: runners.RegistryPyPI, Identifier: "tiny-climb", Version: "1.0", Transport: probe.TransportStdio}
	s := crawlCandidates(t, true, runners.Options{}, p)[p.ID()]
	if s.Reachable || s.ErrorKind != probe.KindInstall || !strings.Contains(s.Error, "not a plain file name") {
		t.Errorf("%s: %s %q, want install saying the script's name is not a plain file name", p.ID(), s.ErrorKind, s.Error)
	}
	if s.Runner != nil && slices.Contains(s.Runner.Argv, "/tmp/x") {
		t.Errorf("argv %v", s.Runner.Argv)
	}
}

// TestImagesSilentRegistry: a registry that takes the connection and
// never answers holds an image no longer than the install deadline.
func TestImagesSilentRegistry(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	silent := crawltest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	p := &runners.Package{RegistryType: runners.RegistryOCI, Identifier: strings.TrimPrefix(silent.URL, "http://") + "/acme/server:1.0", Transport: probe.TransportStdio}
	// The crawl's own deadline only keeps a failing test from hanging.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := Options{CandidateList: []Candidate{{Package: p, Record: runners.PackageRecord(p, "test", "io.test/x", "1.0.0")}}, Out: t.TempDir(),
		AllowPrivate: true, OmitElapsed: true, Probe: probe.Options{Timeout: crawlTimeout},
		Packages: runners.Options{Cache: sharedCache(t), InstallTimeout: 2 * time.Second}}
	start := time.Now()
	if _, err := Run(ctx, o); err != nil {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
	var s ServerRecord
	if err := json.Unmarshal([]byte(gunzipLines(t, readAll(t, o.Out)["servers.jsonl.gz"])[0]), &s); err != nil {
		t.Fatal(err)
	}
	if s.Reachable || s.ErrorKind != probe.KindInstall || !strings.Contains(s.Error, "did not finish within 2s") {
		t.Errorf("%s: %s %q, want install saying resolving did not finish", p.ID(), s.ErrorKind, s.Error)
	}
}
