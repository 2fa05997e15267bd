package crawl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// TestCrawlReusesRecords: with --reuse-package-records, a crawl takes a
// packaged server's record from the last run of the same install under
// the same conditions, and runs the server again whenever one of them
// changed. The servers answer differently at every run (a random tool
// name, a random exit message), so a record taken from the cache is told
// from a new run by its bytes alone. A package whose dependency the
// registry lacks fails to install, and a crawl with the flag does not try
// again until one without it does.
func TestCrawlReusesRecords(t *testing.T) {
	npmtest.NeedSandbox(t)
	reg := npmtest.NewRegistry(t, []npmtest.Package{
		{Name: "tiny-dice", Version: "1.0.0", Prelude: `notes.push("roll_" + Math.random().toString(36).slice(2), "argv_" + process.argv.slice(2).join("_"), "<b>&amp;</b>"); serve();`},
		{Name: "tiny-exit", Version: "1.0.0", Prelude: `console.error("gone " + Math.random().toString(36).slice(2)); process.exit(2);`},
		// A dependency the registry does not have: npm fails with E404,
		// as it will as long as the registry answers the same.
		{Name: "tiny-orphan", Version: "1.0.0", Prelude: `serve();`, Dependencies: map[string]string{"tiny-nowhere": "1.0.0"}},
	}, nil)
	npmtest.Use(t, reg.URL)
	level := "1"
	pkgs := func() []Candidate {
		return []Candidate{
			{Line: 1, Package: &runners.Package{RegistryType: "npm", Identifier: "tiny-dice", Version: "1.0.0", Transport: probe.TransportStdio,
				PackageArguments: []runners.Argument{{Type: "named", Name: "--level", Default: &level}}}},
			{Line: 2, Package: &runners.Package{RegistryType: "npm", Identifier: "tiny-exit", Version: "1.0.0", Transport: probe.TransportStdio}},
			{Line: 3, Package: &runners.Package{RegistryType: "npm", Identifier: "tiny-orphan", Version: "1.0.0", Transport: probe.TransportStdio}},
		}
	}
	cache := crawltest.CacheDir(t)
	opt := Options{OmitElapsed: true, Probe: probe.Options{Timeout: crawlTimeout},
		Packages: runners.Options{Cache: cache, Limits: sandbox.Limits{Memory: 4 << 30}, ReuseRecords: true}}
	// crawl runs one crawl into a new folder and returns the dice's tool
	// names and the exit's error, with how many records it reused; files
	// are the release's record files.
	var files [2][]byte
	var orphan serverLine
	crawl := func(what string) (dice []string, exit string, reused int) {
		t.Helper()
		opt.CandidateList, opt.Out = pkgs(), t.TempDir()
		sum, err := Run(context.Background(), opt)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		s := readServers(t, opt.Out)
		d, e := s["npm:tiny-dice@1.0.0"], s["npm:tiny-exit@1.0.0"]
		orphan = s["npm:tiny-orphan@1.0.0"]
		if !d.Reachable || len(d.tools) < 6 || e.ErrorKind != probe.KindExited || !strings.Contains(e.Error, "gone ") {
			t.Fatalf("%s: dice %v %v (%s: %s), exit %s: %s", what, d.Reachable, d.tools, d.ErrorKind, d.Error, e.ErrorKind, e.Error)
		}
		for i, name := range []string{"servers.jsonl.gz", "server_tools.jsonl.gz"} {
			b, err := os.ReadFile(filepath.Join(opt.Out, name))
			if err != nil {
				t.Fatal(err)
			}
			files[i] = b
		}
		rel, err := release.Read(opt.Out)
		if err != nil {
			t.Fatal(err)
		}
		if rel.Options.ReusePackageRecords != opt.Packages.ReuseRecords {
			t.Errorf("%s: release.json says reuse_package_records %v", what, rel.Options.ReusePackageRecords)
		}
		return d.tools, e.Error, sum.ReusedRecords
	}

	dice, exit, reused := crawl("first crawl")
	if reused != 0 {
		t.Fatalf("the first crawl reused %d records from an empty cache", reused)
	}
	if orphan.ErrorKind != probe.KindInstall || !strings.Contains(orphan.Error, "E404") {
		t.Fatalf("first crawl: the orphan is %s: %s; want an install failure naming E404", orphan.ErrorKind, orphan.Error)
	}
	first := files
	asked := reg.Packuments("tiny-orphan")
	if d, e, n := crawl("second crawl"); n != 3 || !slices.Equal(d, dice) || e != exit {
		t.Fatalf("second crawl: reused %d, dice %v exit %q; want 3, the first crawl's %v %q", n, d, e, dice, exit)
	}
	if n := reg.Packuments("tiny-orphan") - asked; n != 0 {
		t.Errorf("the second crawl installed the orphan again (%d packument fetches): its failure is settled", n)
	}
	// The reused records are the first crawl's byte for byte (a tool's
	// "<b>&amp;</b>" as the server sent it, not HTML-escaped).
	for i := range files {
		if !bytes.Equal(files[i], first[i]) {
			t.Fatalf("second crawl's records differ from the first's:\n%s\n%s", files[i], first[i])
		}
	}

	// Without the flag every server runs, and what it answers is new; it
	// is what the next crawl reuses. The orphan's dependency is published
	// meanwhile: the crawl without the flag installs it.
	reg.Publish(npmtest.Package{Name: "tiny-nowhere", Version: "1.0.0", Prelude: `serve();`})
	opt.Packages.ReuseRecords = false
	if d, e, n := crawl("crawl without reuse"); n != 0 || slices.Equal(d, dice) || e == exit || !orphan.Reachable {
		t.Fatalf("crawl without reuse: reused %d, dice %v exit %q, orphan %s: %s; want new answers, the orphan installed", n, d, e, orphan.ErrorKind, orphan.Error)
	} else {
		dice, exit = d, e
	}
	opt.Packages.ReuseRecords = true
	if d, e, n := crawl("crawl after one without reuse"); n != 3 || !slices.Equal(d, dice) || e != exit || !orphan.Reachable {
		t.Fatalf("crawl after one without reuse: reused %d, dice %v exit %q, orphan reachable %v; want 3, %v %q, reachable", n, d, e, orphan.Reachable, dice, exit)
	}

	// The entry's arguments changed (same version): the dice runs again,
	// the exit, whose conditions are the same, does not.
	level = "2"
	d, e, n := crawl("changed arguments")
	if n != 2 || slices.Equal(d, dice) || e != exit || !slices.Contains(d, "argv_--level_2") {
		t.Fatalf("changed arguments: reused %d, dice %v exit %q; want 2, a new dice with --level 2, the first exit", n, d, e)
	}
	dice = d

	// A record option changed: both run again.
	opt.Probe.Timeout = crawlTimeout + 1e9
	if d, e, n := crawl("changed timeout"); n != 0 || slices.Equal(d, dice) || e == exit {
		t.Fatalf("changed timeout: reused %d, dice %v exit %q; want both run again", n, d, e)
	} else {
		dice, exit = d, e
	}

	// The folder installed again (evicted, or torn): its record is not
	// that install's.
	folders, _ := filepath.Glob(filepath.Join(cache, "npm-tiny-dice-*"))
	if len(folders) != 1 {
		t.Fatalf("dice folders in the cache: %v", folders)
	}
	if err := os.RemoveAll(folders[0]); err != nil {
		t.Fatal(err)
	}
	if d, e, n := crawl("reinstalled"); n != 2 || slices.Equal(d, dice) || e != exit {
		t.Fatalf("reinstalled: reused %d, dice %v exit %q; want 2, a new dice, the last exit", n, d, e)
	}
}
