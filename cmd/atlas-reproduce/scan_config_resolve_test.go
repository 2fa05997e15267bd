package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/agentconfig"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ocitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/pypitest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestScanConfigNPMServers configures `npx -y PKG` and `npx -y PKG@~1.0`
// against a loopback npm registry whose latest is 1.1.0: each is resolved
// as npx would (the latest, the highest match of the range), the version
// recorded, and that version run in the sandbox and labelled; the servers
// stay unpinned findings. A pinned server gets the config's arguments and
// env, its token from the environment.
func TestScanConfigNPMServers(t *testing.T) {
	npmtest.NeedSandbox(t)
	url, _ := npmtest.Registry(t, []npmtest.Package{
		{Name: "@tiny/good", Version: "1.1.0", Prelude: `serve();`},
		{Name: "@tiny/good", Version: "1.0.0", Prelude: `serve();`},
		{Name: "@tiny/args", Version: "2.0.0", Prelude: `TOOLS.push({name: "arg_" + process.argv[2] + "_env_" + process.env.TINY_MODE + "_" + process.env.TINY_TOKEN, inputSchema: {type: "object"}}); serve();`},
	})
	t.Setenv("ATLAS_TINY_TOKEN", "tok")
	npmtest.Use(t, url)
	repo := t.TempDir()
	cfg := "{\n  \"mcpServers\": {\n    \"latest\": {\"command\": \"npx\", \"args\": [\"-y\", \"@tiny/good\"]},\n    \"range\": {\"command\": \"npx\", \"args\": [\"-y\", \"@tiny/good@~1.0\"]},\n" +
		"    \"pinned\": {\"command\": \"npx\", \"args\": [\"-y\", \"@tiny/args@2.0.0\", \"hello\"], \"env\": {\"TINY_MODE\": \"fast\", \"TINY_TOKEN\": \"${ATLAS_TINY_TOKEN}\"}}\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(repo, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	for _, d := range []string{filepath.Dir(filepath.Dir(cache)), filepath.Dir(cache)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: &errb}
	o := scanConfigOptions{Repo: repo, JSON: true, Probe: probe.Options{Timeout: 60 * time.Second},
		Packages: &runners.Options{Cache: cache}}
	if err := runScanConfig(context.Background(), env, o); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	want := map[string]string{"latest": "npm:@tiny/good@1.1.0", "range": "npm:@tiny/good@1.0.0"}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var row struct {
			Name, Resolved, Scan string
			Unpinned             bool
			Tools                []scannedTool
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		if row.Name == "pinned" {
			names := []string{}
			for _, tl := range row.Tools {
				names = append(names, tl.Name)
			}
			if row.Unpinned || row.Resolved != "" || !slices.Contains(names, "arg_hello_env_fast_tok") {
				t.Errorf("pinned: unpinned %v, resolved %q, tools %v; want the tool naming the config's argument and env", row.Unpinned, row.Resolved, names)
			}
			continue
		}
		if row.Resolved != want[row.Name] || !row.Unpinned || len(row.Tools) != 3 {
			t.Errorf("%s: resolved %q, unpinned %v, scan %q, %d tools; want %s, still unpinned, 3 tools", row.Name, row.Resolved, row.Unpinned, row.Scan, len(row.Tools), want[row.Name])
		}
		delete(want, row.Name)
	}
	if len(want) > 0 {
		t.Errorf("not listed: %v", want)
	}
}

// TestResolveUnpinned resolves an image without a tag to the digest of
// its latest tag on a loopback registry, and an unpinned PyPI project to
// its latest release on a loopback index, or with a version specifier to
// the highest release it allows, as docker run and uvx would.
func TestResolveUnpinned(t *testing.T) {
	t.Run("oci", func(t *testing.T) {
		reg := ocitest.NewRegistry(t, "anonymous")
		img := ocitest.Image(t, v1.Config{Entrypoint: []string{"/bin/server"}}, ocitest.Layer(t, ocitest.Entry{Name: "bin/server", Body: []byte("x"), Mode: 0o755}))
		d := reg.Push(t, "acme/server", "latest", img)
		s := agentconfig.Server{Command: "docker", Args: []string{"run", "-i", "--rm", reg.Host + "/acme/server"}}
		got, err := resolveUnpinned(context.Background(), agentconfig.TargetOf(s))
		if err != nil || got.Coordinate() != "oci:"+reg.Host+"/acme/server@"+d.String() {
			t.Errorf("resolved %q (%v), want the digest %s", got.Coordinate(), err, d)
		}
	})
	t.Run("pypi", func(t *testing.T) {
		testenv.Need(t, "python3", "pip resolves a PyPI project's version")
		ix := pypitest.Serve(t, pypitest.Dist{Project: "tiny-time", Version: "1.0", Files: map[string]string{"tiny_time/__init__.py": ""}},
			pypitest.Dist{Project: "tiny-time", Version: "1.2", Files: map[string]string{"tiny_time/__init__.py": ""}})
		t.Setenv("PIP_INDEX_URL", ix.URL)
		ix2 := pypitest.Serve(t, pypitest.Dist{Project: "tiny-time", Version: "1.0", Files: map[string]string{"tiny_time/__init__.py": ""}},
			pypitest.Dist{Project: "tiny-time", Version: "1.2", Files: map[string]string{"tiny_time/__init__.py": ""}},
			pypitest.Dist{Project: "tiny-time", Version: "2.0", Files: map[string]string{"tiny_time/__init__.py": ""}})
		for _, tc := range []struct{ index, word, want string }{
			{ix.URL, "tiny-time", "1.2"},
			// A specifier takes the highest release it allows, not the
			// latest.
			{ix2.URL, "tiny-time<1.2", "1.0"},
			{ix2.URL, "tiny-time>=1.0,<2", "1.2"},
			{ix2.URL, "tiny-time~=1.0", "1.2"},
			{ix2.URL, "tiny-time==1.*", "1.2"},
		} {
			t.Setenv("PIP_INDEX_URL", tc.index)
			s := agentconfig.Server{Command: "uvx", Args: []string{tc.word}}
			got, err := resolveUnpinned(context.Background(), agentconfig.TargetOf(s))
			if err != nil || got.Coordinate() != "pypi:tiny-time@"+tc.want {
				t.Errorf("%s: resolved %q (%v), want pypi:tiny-time@%s", tc.word, got.Coordinate(), err, tc.want)
			}
		}
	})
}

// TestScanConfigOCIServer configures `docker run -i --rm -e MODE IMAGE
// hello` with no tag against a loopback registry: the image is resolved
// to the digest of its latest tag, recorded, pulled by that digest and run
// in the sandbox with the config's argument, and the config's MODE passed
// by -e as docker passes it.
func TestScanConfigOCIServer(t *testing.T) {
	npmtest.NeedSandbox(t)
	testenv.Need(t, "go", "builds the test's static MCP server")
	bin := filepath.Join(t.TempDir(), "server")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", bin, "../../crawl/testdata/stdioserver")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the static server: %v\n%s", err, out)
	}
	body, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	reg := ocitest.NewRegistry(t, "anonymous")
	d := reg.Push(t, "acme/server", "latest", ocitest.Image(t, v1.Config{Entrypoint: []string{"/bin/server"}, Env: []string{"PATH=/bin"}},
		ocitest.Layer(t, ocitest.Entry{Name: "bin/server", Body: body, Mode: 0o755})))
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"mcpServers": {"img": {"command": "docker", "args": ["run", "-i", "--rm", "-e", "MODE", "` + reg.Host + `/acme/server", "hello"], "env": {"MODE": "fast"}}}}`
	if err := os.WriteFile(filepath.Join(repo, ".cursor", "mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	row, names := scanRepoServer(t, repo)
	if row.Resolved != "oci:"+reg.Host+"/acme/server@"+d.String() || !slices.Contains(names, "argv_hello") || !slices.Contains(names, "mode_fast") {
		t.Errorf("resolved %q, scan %q, tools %v; want the digest %s and the config's argument and env", row.Resolved, row.Scan, names, d)
	}
}

// TestScanConfigPyPIServer configures `uvx tiny-time --tz UTC` with no
// version against a loopback index holding 1.0 and 1.2: 1.2 is resolved,
// recorded, installed and run in the sandbox with the config's arguments
// and env.
func TestScanConfigPyPIServer(t *testing.T) {
	npmtest.NeedSandbox(t)
	testenv.Need(t, "python3", "the runtime of PyPI packages")
	// Its tools name its version, its arguments and the MODE variable,
	// so that the test sees which version ran and what the config gave it.
	dist := func(v string) pypitest.Dist {
		src := pypitest.StdioServer("tiny-time", v, `    notes = ["version_`+strings.ReplaceAll(v, ".", "_")+`", "argv_" + "_".join(sys.argv[1:]), "mode_" + os.environ.get("MODE", "")]`)
		return pypitest.Dist{Project: "tiny-time", Version: v, Files: map[string]string{"tiny_time/__init__.py": src},
			ConsoleScripts: map[string]string{"tiny-time": "tiny_time:main"}}
	}
	ix := pypitest.Serve(t, dist("1.0"), dist("1.2"))
	t.Setenv("PIP_INDEX_URL", ix.URL)
	repo := t.TempDir()
	cfg := `{"mcpServers": {"time": {"command": "uvx", "args": ["tiny-time", "--tz", "UTC"], "env": {"MODE": "fast"}}}}`
	if err := os.WriteFile(filepath.Join(repo, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	row, names := scanRepoServer(t, repo)
	want := []string{"version_1_2", "argv_--tz_UTC", "mode_fast"}
	if row.Resolved != "pypi:tiny-time@1.2" || !slices.Equal(names, want) {
		t.Errorf("resolved %q, scan %q, tools %v; want pypi:tiny-time@1.2 and %v", row.Resolved, row.Scan, names, want)
	}
}

// scannedRow is the --json row of a scanned server, as the tests read it.
type scannedRow struct {
	Resolved, Scan string
	Tools          []scannedTool
}

// scanRepoServer runs scan --config --json on repo, whose configs name
// one server, with a package cache of its own open to the sandbox's
// user, and returns the server's row and its tools' names.
func scanRepoServer(t *testing.T, repo string) (scannedRow, []string) {
	t.Helper()
	cache := filepath.Join(t.TempDir(), "cache")
	for _, dir := range []string{filepath.Dir(filepath.Dir(cache)), filepath.Dir(cache)} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: &errb}
	o := scanConfigOptions{Repo: repo, JSON: true, Probe: probe.Options{Timeout: 60 * time.Second},
		Packages: &runners.Options{Cache: cache}}
	if err := runScanConfig(context.Background(), env, o); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var row scannedRow
	if err := json.Unmarshal(out.Bytes(), &row); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	names := []string{}
	for _, tl := range row.Tools {
		names = append(names, tl.Name)
	}
	return row, names
}
