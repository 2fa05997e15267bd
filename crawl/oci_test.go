package crawl

import (
	"archive/tar"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ocitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// sharedCache is a package cache the sandbox's host user can reach: bwrap
// runs as that user, and t.TempDir's folders are the test user's alone.
func sharedCache(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "atlas-cache-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// serverImage is an image whose layer holds the static server at
// /bin/server, configured to run as root.
func serverImage(t testing.TB, netAddr string) v1.Image {
	return ocitest.Image(t, v1.Config{Entrypoint: []string{"/bin/server"}, Cmd: []string{"from-cmd"},
		Env: []string{"PATH=/bin", "MODE=image", "NET_ADDR=" + netAddr}, WorkingDir: "/srv", User: "root"},
		ocitest.Layer(t, ocitest.Entry{Name: "bin/", Type: tar.TypeDir, Mode: 0o755},
			ocitest.Entry{Name: "bin/server", Body: crawltest.StdioServer(t), Mode: 0o700}),
		ocitest.Layer(t, ocitest.Entry{Name: "etc/passwd", Body: []byte("root:x:0:0::/root:/bin/sh\n")}))
}

// TestCrawlImages: OCI entries run from a loopback registry (token flow,
// pull by digest): the entrypoint with the entry's arguments or the
// image's command, the entry's variables over the image's, in the image's
// working folder, with its root read-only and as an unprivileged user
// though the image says root, without network, from the cache the second
// time; a hostile image and a missing one are install records.
func TestCrawlImages(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	listener, connections := crawltest.CountingListener(t)

	reg := ocitest.NewRegistry(t, "anonymous")
	d := reg.Push(t, "acme/server", "1.0", serverImage(t, listener.Addr().String()))
	reg.Push(t, "acme/evil", "1.0", ocitest.Image(t, v1.Config{Entrypoint: []string{"/bin/server"}},
		ocitest.Layer(t, ocitest.Entry{Name: "../../../../../../tmp/atlas-evil", Body: []byte("x")})))
	mode := "entry"
	tagged := &runners.Package{RegistryType: runners.RegistryOCI, Identifier: reg.Host + "/acme/server:1.0", Transport: probe.TransportStdio,
		PackageArguments: []runners.Argument{{Type: "positional", Value: "stdio"}, {Type: "named", Name: "--level", Default: ptr("3")}},
		Env:              []runners.EnvVar{{Name: "MODE", Default: &mode}}}
	pinned := &runners.Package{RegistryType: runners.RegistryOCI, Identifier: reg.Host + "/acme/server@" + d.String(), Transport: probe.TransportStdio}
	evil := &runners.Package{RegistryType: runners.RegistryOCI, Identifier: reg.Host + "/acme/evil:1.0", Transport: probe.TransportStdio}
	missing := &runners.Package{RegistryType: runners.RegistryOCI, Identifier: reg.Host + "/acme/missing:1.0", Transport: probe.TransportStdio}
	var cands []Candidate
	for _, p := range []*runners.Package{tagged, pinned, evil, missing} {
		cands = append(cands, Candidate{Package: p, Record: runners.PackageRecord(p, "test", "io.test/"+p.Identifier, "1.0.0")})
	}
	cache := sharedCache(t)
	for run := range 2 { // cold, then warm from the cache
		opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
			Probe: probe.Options{Timeout: crawlTimeout}, Packages: runners.Options{Cache: cache}}
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatal(err)
		}
		servers := readServers(t, opt.Out)
		common := []string{"uid_1000", "cwd_.srv", "rootwrite_READ-ONLY-FILE-SYSTEM", "hostusr_NO-SUCH-FILE-OR-DIRECTORY"}
		for _, tc := range []struct {
			p     *runners.Package
			notes []string
		}{
			{tagged, append([]string{"echo", "argv_stdio_--level_3", "mode_entry"}, common...)},
			{pinned, append([]string{"echo", "argv_from-cmd", "mode_image"}, common...)},
		} {
			s := servers[tc.p.ID()]
			if !s.Reachable {
				t.Fatalf("run %d: %s: %s: %s", run, tc.p.ID(), s.ErrorKind, s.Error)
			}
			for _, n := range tc.notes {
				if !slices.Contains(s.tools, n) {
					t.Errorf("run %d: %s: tools %v lack %s", run, tc.p.ID(), s.tools, n)
				}
			}
			if slices.Contains(s.tools, "net_ok") {
				t.Errorf("run %d: %s reached the network: %v", run, tc.p.ID(), s.tools)
			}
			if s.Runner == nil || s.Runner.Runner != runners.RegistryOCI || s.Runner.Resolved != d.String() || s.Runner.Argv[0] != "/bin/server" {
				t.Errorf("run %d: %s: runner %+v, want oci %s", run, tc.p.ID(), s.Runner, d)
			}
		}
		for _, p := range []*runners.Package{evil, missing} {
			if s := servers[p.ID()]; s.Reachable || s.ErrorKind != probe.KindInstall {
				t.Errorf("run %d: %s: %s %s, want install", run, p.ID(), s.ErrorKind, s.Error)
			}
		}
		if s := servers[evil.ID()]; !strings.Contains(s.Error, "escapes") {
			t.Errorf("hostile image: %s", s.Error)
		}
	}
	if _, err := os.Stat("/tmp/atlas-evil"); err == nil {
		t.Error("a layer wrote outside its root")
	}
	if n := connections.Load(); n != 0 {
		t.Errorf("a sandboxed image reached the host's loopback %d times", n)
	}
	ents, _ := os.ReadDir(cache)
	var images int
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "oci-") {
			images++
		}
	}
	if images != 1 {
		t.Errorf("%d images in the cache, want the one (pulled once, by tag and by digest)", images)
	}

	// scan oci:IMAGE@DIGEST runs the same image as the crawl.
	id, r, err := runners.ScanPackage(context.Background(), pinned.ID(), probe.Options{Timeout: crawlTimeout, AllowAddr: probe.AnyAddr}, runners.Options{Cache: cache})
	if err != nil || id != pinned.ID() || !r.Reachable || len(r.Tools) != 8 {
		t.Errorf("scan %s: %s reachable %v, %d tools, %v (%s: %s)", pinned.ID(), id, r.Reachable, len(r.Tools), err, r.ErrorKind, r.Error)
	}
}

func ptr[T any](v T) *T { return &v }
