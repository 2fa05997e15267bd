package crawl

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// endlessHandler answers with body's first bytes, then spaces (inside a
// JSON string, or an HTML page's text) until the client goes away, and
// counts what it wrote. A declared length, when set, is sent as the
// Content-Length.
func endlessHandler(contentType, head string, declared int64, wrote *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		if declared > 0 {
			w.Header().Set("Content-Length", strconv.FormatInt(declared, 10))
		}
		n, _ := w.Write([]byte(head))
		wrote.Add(int64(n))
		buf := []byte(strings.Repeat(" ", 64<<10))
		for r.Context().Err() == nil {
			n, err := w.Write(buf)
			wrote.Add(int64(n))
			if err != nil {
				return
			}
		}
	}
}

// TestBundlesEndless: a bundle served without end stops at the package
// bound, and one whose Content-Length is past the bound is refused before
// it is read.
func TestBundlesEndless(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	const bound = 8 << 20
	var endlessWrote, declaredWrote atomic.Int64
	endless := crawltest.Serve(t, endlessHandler("application/zip", "PK", 0, &endlessWrote))
	declared := crawltest.Serve(t, endlessHandler("application/zip", "PK", 1<<40, &declaredWrote))
	a := &runners.Package{RegistryType: runners.RegistryMCPB, Identifier: endless.URL + "/b.mcpb", FileSHA256: strings.Repeat("0", 64), Transport: probe.TransportStdio}
	b := &runners.Package{RegistryType: runners.RegistryMCPB, Identifier: declared.URL + "/b.mcpb", FileSHA256: strings.Repeat("0", 64), Transport: probe.TransportStdio}
	servers := crawlCandidates(t, true, runners.Options{PackageMax: bound}, a, b)
	for _, tc := range []struct {
		p    *runners.Package
		want string
	}{{a, "over the package bound"}, {b, "1099511627776 bytes, over the package bound"}} {
		if s := servers[tc.p.ID()]; s.Reachable || s.ErrorKind != probe.KindInstall || !strings.Contains(s.Error, tc.want) {
			t.Errorf("%s: %s %q, want install saying %q", tc.p.ID(), s.ErrorKind, s.Error, tc.want)
		}
	}
	// What the server wrote is what the crawl read and what the sockets
	// buffered; the buffers of a loopback connection hold a few MiB.
	if n := endlessWrote.Load(); n > bound+32<<20 {
		t.Errorf("the endless bundle's server wrote %d bytes; the bound is %d", n, bound)
	}
	if n := declaredWrote.Load(); n > 32<<20 {
		t.Errorf("a bundle declared past the bound had %d bytes written; want it refused at its length", n)
	}
}

// TestPackagesEndlessInstallerDocuments: the packument npm reads and the
// index page pip reads are read in the install sandbox, not by the
// crawl; one served without end stops at the install sandbox's memory
// or file size bound or its deadline, and the package is an install
// record.
func TestPackagesEndlessInstallerDocuments(t *testing.T) {
	npmtest.NeedSandbox(t)
	testenv.Need(t, "python3", "the runtime of PyPI packages")
	var npmWrote, pipWrote atomic.Int64
	registry := crawltest.Serve(t, endlessHandler("application/json", `{"name": "tiny-endless", "description": "`, 0, &npmWrote))
	index := crawltest.Serve(t, endlessHandler("text/html", "<!DOCTYPE html><html><body>", 0, &pipWrote))
	npmtest.Use(t, registry.URL+"/")
	t.Setenv("PIP_INDEX_URL", index.URL+"/simple")
	npmPkg := &runners.Package{RegistryType: runners.RegistryNPM, Identifier: "tiny-endless", Version: "1.0.0", Transport: probe.TransportStdio}
	pipPkg := &runners.Package{RegistryType: runners.RegistryPyPI, Identifier: "tiny-endless", Version: "1.0", Transport: probe.TransportStdio}
	// The install's folders (the package bound and 1 MiB, and 64 MiB
	// each for /tmp, /dev/shm and the home) fit within the bound.
	const memory, packageMax = 384 << 20, 32 << 20
	start := time.Now()
	servers := crawlCandidates(t, true, runners.Options{InstallTimeout: 2 * time.Minute, PackageMax: packageMax, Limits: sandbox.Limits{Memory: memory}}, npmPkg, pipPkg)
	t.Logf("crawled in %v; the packument's server wrote %d MiB, the index's %d MiB", time.Since(start).Round(time.Second), npmWrote.Load()>>20, pipWrote.Load()>>20)
	for _, p := range []*runners.Package{npmPkg, pipPkg} {
		s := servers[p.ID()]
		t.Logf("%s: %s: %s", p.ID(), s.ErrorKind, s.Error)
		// npm keeps what it reads in memory and writes it to its cache:
		// the memory bound or the file size bound (EFBIG), whichever it
		// meets first, stops it.
		if s.Reachable || s.ErrorKind != probe.KindInstall || !(strings.Contains(s.Error, "memory bound") || strings.Contains(s.Error, "did not finish") || strings.Contains(s.Error, "EFBIG")) {
			t.Errorf("%s: %s %q, want install stopped by the memory bound, the file size bound or the deadline", p.ID(), s.ErrorKind, s.Error)
		}
	}
	if npmWrote.Load() == 0 || pipWrote.Load() == 0 {
		t.Errorf("the installers did not ask: npm read %d bytes, pip %d", npmWrote.Load(), pipWrote.Load())
	}
}
