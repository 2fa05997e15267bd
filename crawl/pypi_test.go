package crawl

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/pypitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// pyServer is a stdio MCP server on Python's standard library whose tools
// are echo and notes of where it runs.
var pyServer = pypitest.StdioServer("tiny", "1.0", `    notes = ["echo", "uid_%d" % os.getuid(), "argv_" + "_".join(sys.argv[1:]), "mode_" + os.environ.get("MODE", ""),
             "pth_" + os.environ.get("PTH_NET", "none")]
    try:
        import tiny_dep
        notes.append("dep_" + tiny_dep.VALUE)
    except ImportError:
        notes.append("dep_missing")`)

// TestCrawlPyPI: PyPI entries install from the index pip is configured
// with (a loopback index), wheels only, dependencies from the same index,
// into a venv of the machine's python3, and run in the run sandbox: the
// console script named like the project, or the module; an sdist-only
// project and one whose Requires-Python this python cannot meet are
// install records saying so; a .pth that tries the network reaches
// nothing; the second crawl installs nothing again.
func TestCrawlPyPI(t *testing.T) {
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	testenv.Need(t, "python3", "the runtime of PyPI packages")
	listener, connections := crawltest.CountingListener(t)
	pth := fmt.Sprintf(`import os, socket; exec("try:\n socket.create_connection(('127.0.0.1', %d), 2).close(); os.environ['PTH_NET'] = 'ok'\nexcept Exception as e:\n os.environ['PTH_NET'] = type(e).__name__")`+"\n",
		listener.Addr().(*net.TCPAddr).Port)
	ix := pypitest.Serve(t,
		pypitest.Dist{Project: "tiny-mcp-server", Version: "1.0", Files: map[string]string{"tiny_server/__init__.py": pyServer},
			ConsoleScripts: map[string]string{"tiny-mcp-server": "tiny_server:main", "tiny-other": "tiny_server:main"}, Requires: []string{"tiny-dep==1.0"}},
		pypitest.Dist{Project: "tiny-dep", Version: "1.0", Files: map[string]string{"tiny_dep/__init__.py": `VALUE = "dep"` + "\n"}},
		pypitest.Dist{Project: "tiny-pth", Version: "1.0", Files: map[string]string{"tiny_pth/__init__.py": pyServer,
			"tiny_pth/__main__.py": "from tiny_pth import main\nmain()\n", "zz_tiny_pth.pth": pth}},
		pypitest.Dist{Project: "tiny-sdist", Version: "1.0", SdistOnly: true},
		pypitest.Dist{Project: "tiny-future", Version: "1.0", Files: map[string]string{"tiny_future.py": ""}, RequiresPython: ">=3.99"},
	)
	t.Setenv("PIP_INDEX_URL", ix.URL)
	mode := "entry"
	server := &runners.Package{RegistryType: runners.RegistryPyPI, Identifier: "tiny-mcp-server", Version: "1.0", Transport: probe.TransportStdio, RuntimeHint: "uvx",
		PackageArguments: []runners.Argument{{Type: "positional", Value: "stdio"}}, Env: []runners.EnvVar{{Name: "MODE", Default: &mode}}}
	withPth := &runners.Package{RegistryType: runners.RegistryPyPI, Identifier: "tiny-pth", Version: "1.0", Transport: probe.TransportStdio}
	sdist := &runners.Package{RegistryType: runners.RegistryPyPI, Identifier: "tiny-sdist", Version: "1.0", Transport: probe.TransportStdio}
	future := &runners.Package{RegistryType: runners.RegistryPyPI, Identifier: "tiny-future", Version: "1.0", Transport: probe.TransportStdio}
	var cands []Candidate
	for _, p := range []*runners.Package{server, withPth, sdist, future} {
		cands = append(cands, Candidate{Package: p, Record: runners.PackageRecord(p, "test", "io.test/"+p.Identifier, "1.0.0")})
	}
	cache := sharedCache(t)
	for run := range 2 {
		opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
			Probe: probe.Options{Timeout: crawlTimeout}, Packages: runners.Options{Cache: cache}}
		if _, err := Run(context.Background(), opt); err != nil {
			t.Fatal(err)
		}
		servers := readServers(t, opt.Out)
		for _, tc := range []struct {
			p     *runners.Package
			notes []string
			argv  string
		}{
			{server, []string{"echo", "uid_1000", "argv_stdio", "mode_entry", "dep_dep", "pth_none"}, "/pypkg/venv/bin/tiny-mcp-server"},
			{withPth, []string{"echo", "uid_1000", "argv_", "pth_ConnectionRefusedError"}, "-m"},
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
			if s.Runner == nil || s.Runner.Runner != runners.RegistryPyPI || !slices.Contains(s.Runner.Argv, tc.argv) {
				t.Errorf("run %d: %s: runner %+v, want pypi running %s", run, tc.p.ID(), s.Runner, tc.argv)
			}
		}
		for _, tc := range []struct {
			p    *runners.Package
			want string
		}{{sdist, "no wheel"}, {future, "requires_python"}} {
			if s := servers[tc.p.ID()]; s.Reachable || s.ErrorKind != probe.KindInstall || !strings.Contains(s.Error, tc.want) {
				t.Errorf("run %d: %s: %s %q, want install with %q", run, tc.p.ID(), s.ErrorKind, s.Error, tc.want)
			}
		}
	}
	if n := ix.Fetched("tiny_mcp_server-1.0-py3-none-any.whl"); n != 1 {
		t.Errorf("the wheel was downloaded %d times, want once (the second crawl runs it from the cache)", n)
	}
	if ix.Fetched("tiny_sdist-1.0.tar.gz") != 0 {
		t.Error("the sdist was downloaded")
	}
	if n := connections.Load(); n != 0 {
		t.Errorf("a .pth reached the host's loopback %d times", n)
	}
}
