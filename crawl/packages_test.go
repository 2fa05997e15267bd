package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/npmtest"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
)

// hostile is the census of packages the crawl test serves: a good one,
// and one for each way a stranger's package can misbehave.
type hostile struct {
	netPort  int
	secret   string // a file standing in for ~/.ssh/id_rsa
	outside  string // a file no package may create
	scripted string // the file the install scripts would create
}

func (h hostile) packages() []npmtest.Package {
	writeMark := fmt.Sprintf(`node -e "require('fs').writeFileSync('%s','ran')"`, h.scripted)
	return []npmtest.Package{
		{Name: "@tiny/good", Version: "1.0.0", Prelude: `notes.push("mode_" + process.env.MODE, "leak_" + (process.env.SANDBOX_LEAK || "none"), "argv_" + process.argv.slice(2).join("_")); serve();`},
		{Name: "tiny-net", Version: "1.0.0", Prelude: fmt.Sprintf(`const s = require("net").connect({host: "127.0.0.1", port: %d});
s.on("connect", () => { notes.push("net_connected"); serve(); });
s.on("error", (e) => { notes.push("net_" + e.code); serve(); });`, h.netPort)},
		{Name: "tiny-files", Version: "1.0.0", Prelude: fmt.Sprintf(`const fs = require("fs");
for (const [n, f] of [["ssh", () => fs.readFileSync(%q)], ["homessh", () => fs.readdirSync(require("os").homedir() + "/.ssh")], ["write", () => fs.writeFileSync(%q, "x")], ["pkgwrite", () => fs.writeFileSync(__filename, "x")]]) {
  try { f(); notes.push(n + "_ok"); } catch (e) { notes.push(n + "_" + e.code); }
}
serve();`, h.secret, h.outside)},
		{Name: "tiny-child", Version: "1.0.0", Prelude: `require("child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {detached: true, stdio: "ignore"}).unref(); serve();`},
		{Name: "tiny-scripts", Version: "1.0.0", Prelude: `serve();`,
			Scripts: map[string]string{"preinstall": writeMark, "install": writeMark, "postinstall": writeMark, "prepare": writeMark}},
		{Name: "tiny-garbage", Version: "1.0.0", Prelude: `process.stdout.write("this is not JSON\n"); serve();`},
		{Name: "tiny-silent", Version: "1.0.0", Prelude: `process.stdin.resume();`},
		{Name: "tiny-flood", Version: "1.0.0", Prelude: `process.stdout.write('{"jsonrpc": "2.0", "id": 1, "result": {"x": "'); const b = Buffer.alloc(1 << 20, 120); let n = 0;
(function w() { while (n < 1024) { n++; if (!process.stdout.write(b)) { process.stdout.once("drain", w); return; } } })();`},
		{Name: "tiny-crash", Version: "1.0.0", Prelude: `console.error("boom"); process.exit(3);`},
		{Name: "tiny-config", Version: "1.0.0", Prelude: `if (!process.env.API_KEY) { console.error("API_KEY is not set"); process.exit(1); } serve();`},
	}
}

// pkgEntry is a registry entry with packages.
func pkgEntry(name string, remotes []map[string]any, pkgs ...map[string]any) map[string]any {
	e := regEntry(name, "1.0.0", "active", true, "2026-01-01T00:00:00Z", remotes...)
	e["server"].(map[string]any)["packages"] = pkgs
	return e
}

func npmPkg(id, version string, extra map[string]any) map[string]any {
	p := map[string]any{"registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org", "identifier": id, "version": version,
		"runtimeHint": "npx", "transport": map[string]any{"type": "stdio"}}
	maps.Copy(p, extra)
	return p
}

// crawlTimeout bounds each test server's exchange: the silent one costs it.
const crawlTimeout = 8 * time.Second

func TestCrawlPackages(t *testing.T) {
	npmtest.NeedSandbox(t)
	listener, connections := crawltest.CountingListener(t)
	dir := t.TempDir()
	h := hostile{netPort: listener.Addr().(*net.TCPAddr).Port, secret: filepath.Join(dir, "ssh", "id_rsa"),
		outside: filepath.Join(dir, "outside"), scripted: filepath.Join(dir, "scripts-ran")}
	os.MkdirAll(filepath.Dir(h.secret), 0o700)
	if err := os.WriteFile(h.secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	npmURL, fetched := npmtest.Registry(t, h.packages())
	npmtest.Use(t, npmURL)
	t.Setenv("SANDBOX_LEAK", "the crawl's own environment")
	// The PyPI, OCI and MCPB entries fail to install from closed loopback
	// ports: this test is about npm, and reaches nothing outside.
	t.Setenv("PIP_INDEX_URL", "http://127.0.0.1:1/simple")
	t.Setenv("API_KEY", "a secret of the user's") // never handed on

	remote := crawltest.StreamableServer(t, crawltest.GenTools(3, "remote"), 2, false)
	mode := "fast"
	entries := []map[string]any{
		pkgEntry("io.test/good", []map[string]any{{"type": "streamable-http", "url": remote.URL}},
			npmPkg("@tiny/good", "1.0.0", map[string]any{
				"environmentVariables": []map[string]any{{"name": "MODE", "default": mode}, {"name": "OPTIONAL_TOKEN", "isSecret": true}},
				"packageArguments":     []map[string]any{{"type": "positional", "value": "serve"}, {"type": "named", "name": "--level", "default": "3"}},
			})),
	}
	for _, p := range h.packages()[1:] {
		extra := map[string]any{}
		if p.Name == "tiny-config" {
			extra["environmentVariables"] = []map[string]any{{"name": "API_KEY", "isRequired": true, "isSecret": true}}
		}
		entries = append(entries, pkgEntry("io.test/"+p.Name, nil, npmPkg(p.Name, p.Version, extra)))
	}
	entries = append(entries,
		pkgEntry("io.test/missing", nil, npmPkg("tiny-missing", "9.9.9", nil)),
		pkgEntry("io.test/py", nil, map[string]any{"registryType": "pypi", "identifier": "tiny-py", "version": "1.0", "runtimeHint": "uvx", "transport": map[string]any{"type": "stdio"}}),
		pkgEntry("io.test/oci", nil, map[string]any{"registryType": "oci", "identifier": "127.0.0.1:1/tiny/oci", "version": "1.0", "transport": map[string]any{"type": "stdio"}}),
		pkgEntry("io.test/nuget", nil, map[string]any{"registryType": "nuget", "identifier": "Tiny.Nuget", "version": "1.0", "transport": map[string]any{"type": "stdio"}}),
		pkgEntry("io.test/mcpb", nil, map[string]any{"registryType": "mcpb", "identifier": "http://127.0.0.1:1/tiny.mcpb", "version": "1.0", "transport": map[string]any{"type": "stdio"}}),
		pkgEntry("io.test/http-pkg", nil, npmPkg("tiny-http", "1.0.0", map[string]any{"transport": map[string]any{"type": "streamable-http", "url": "http://localhost:8080/mcp"}})),
	)
	reg := crawltest.Serve(t, &standInRegistry{entries: entries, pageSize: 5})
	cands, st, err := FetchRegistry(context.Background(), RegistryOptions{URL: reg.URL})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kept != 17 || st.Packages != 16 || len(cands) != 17 {
		t.Fatalf("registry: kept %d of %d packages, %d candidates; want 17 of 16, 17: %+v", st.Kept, st.Packages, len(cands), st)
	}
	if cands[0].URL == "" || cands[1].Package == nil || cands[1].Package.ID() != "npm:@tiny/good@1.0.0" {
		t.Fatalf("the remote and the package of one entry: %+v %+v", cands[0], cands[1])
	}

	cache := crawltest.CacheDir(t)
	opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
		Probe:    probe.Options{Timeout: crawlTimeout, MaxBytes: 4 << 20},
		Packages: runners.Options{Cache: cache, Limits: sandbox.Limits{Memory: 4 << 30}}}
	sum, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	wantKinds := map[string]int{
		probe.KindTimeout: 1, probe.KindTooManyBytes: 1, probe.KindExited: 1, probe.KindNeedsConfig: 1,
		probe.KindInstall: 4, probe.KindNoRuntime: 2,
	}
	if sum.Reachable != 7 || sum.Servers != 17 || !maps.Equal(sum.UnreachableByKind, wantKinds) {
		t.Errorf("reachable %d of %d servers, unreachable by kind %v; want 7 of 17, %v", sum.Reachable, sum.Servers, sum.UnreachableByKind, wantKinds)
	}
	servers := readServers(t, opt.Out)
	want := map[string][]string{
		"npm:@tiny/good@1.0.0":   {"read_file", "run", "noop", "mode_fast", "leak_none", "argv_serve_--level_3"},
		"npm:tiny-net@1.0.0":     {"read_file", "run", "noop", "net_ECONNREFUSED"},
		"npm:tiny-files@1.0.0":   {"read_file", "run", "noop", "ssh_ENOENT", "homessh_ENOENT", "write_ENOENT", "pkgwrite_EROFS"},
		"npm:tiny-child@1.0.0":   {"read_file", "run", "noop"},
		"npm:tiny-scripts@1.0.0": {"read_file", "run", "noop"},
		"npm:tiny-silent@1.0.0":  nil,
		"npm:tiny-config@1.0.0":  nil,
		"npm:tiny-missing@9.9.9": nil,
		"pypi:tiny-py@1.0":       nil,
		// A banner line before MCP is left out, as the TypeScript SDK's
		// client leaves it out.
		"npm:tiny-garbage@1.0.0":       {"read_file", "run", "noop"},
		"npm:tiny-flood@1.0.0":         nil,
		"npm:tiny-crash@1.0.0":         nil,
		"npm:tiny-http@1.0.0":          nil,
		"nuget:Tiny.Nuget@1.0":         nil,
		"oci:127.0.0.1:1/tiny/oci:1.0": nil,
	}
	for id, names := range want {
		s, ok := servers[id]
		if !ok {
			t.Errorf("%s: no record", id)
			continue
		}
		if names == nil {
			continue
		}
		if !s.Reachable || !slices.Equal(s.tools, names) || s.Transport != probe.TransportStdio || s.Package != id {
			t.Errorf("%s: reachable %v over %q, tools %v; want %v (%s: %s)", id, s.Reachable, s.Transport, s.tools, names, s.ErrorKind, s.Error)
		}
	}
	if s := servers["npm:tiny-garbage@1.0.0"]; s.StdoutSkippedLines != 1 {
		t.Errorf("npm:tiny-garbage@1.0.0: %d stdout lines recorded as skipped, want 1", s.StdoutSkippedLines)
	}
	if s := servers["npm:tiny-config@1.0.0"]; !strings.Contains(s.Error, "API_KEY") || !strings.Contains(s.Error, "exited") {
		t.Errorf("needs_config record: %s", s.Error)
	}
	if s := servers["npm:tiny-crash@1.0.0"]; !strings.Contains(s.Error, "boom") {
		t.Errorf("exited record keeps no stderr: %s", s.Error)
	}
	if n := connections.Load(); n != 0 {
		t.Errorf("a sandboxed package reached the host's loopback %d times", n)
	}
	for _, f := range []string{h.outside, h.scripted} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s exists: a package wrote outside its sandbox, or an install script ran", f)
		}
	}

	// The release runs through run with exact counts: 3 tools of the
	// remote, and the packages' tools above.
	m, err := hashverify.ReadSHA256Sums(filepath.Join(opt.Out, release.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.Run(context.Background(), pipeline.Options{Data: opt.Out, Out: t.TempDir(), Manifest: m, ManifestName: release.SumsFile})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Verified || rep.Servers != 7 || rep.Tools != 3+6+4+7+3+3+3 || rep.Release == nil || rep.Release.Counts.UnreachableByKind[probe.KindNoRuntime] != 2 {
		t.Errorf("run: verified %v, %d servers, %d tools, release %+v; want 7 servers, 29 tools", rep.Verified, rep.Servers, rep.Tools, rep.Release)
	}

	// A rerun on the same folder resumes: nothing is run again.
	if sum, err := Run(context.Background(), opt); err != nil || sum.Resumed != 17 || sum.Probed != 0 || sum.Reachable != 7 {
		t.Fatalf("resumed crawl: %+v, %v", sum, err)
	}

	// A second crawl into a new folder finds every package in the cache.
	before := fetched.Load()
	opt.Out = t.TempDir()
	opt.CandidateList = cands[:2]
	if sum, err := Run(context.Background(), opt); err != nil || sum.Reachable != 2 {
		t.Fatalf("warm crawl: %+v, %v", sum, err)
	}
	if fetched.Load() != before {
		t.Errorf("the warm crawl fetched %d tarballs again", fetched.Load()-before)
	}
}

// serverLine is a servers.jsonl.gz record with the names of its tools.
type serverLine struct {
	ServerRecord
	tools []string
}

func readServers(t *testing.T, out string) map[string]serverLine {
	t.Helper()
	files := readAll(t, out)
	got := map[string]serverLine{}
	for _, l := range gunzipLines(t, files["servers.jsonl.gz"]) {
		var s ServerRecord
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		got[s.ServerID] = serverLine{ServerRecord: s}
	}
	for _, l := range gunzipLines(t, files["server_tools.jsonl.gz"]) {
		var r struct {
			ServerID string `json:"server_id"`
			Tools    []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		s := got[r.ServerID]
		for _, tool := range r.Tools {
			s.tools = append(s.tools, tool.Name)
		}
		got[r.ServerID] = s
	}
	return got
}

// TestCrawlPackagesWithoutSandbox: with no bwrap on PATH, a crawl still
// crawls its remotes, and each npm package becomes a record of kind
// no_sandbox saying what to install; --no-packages leaves them out.
func TestCrawlPackagesWithoutSandbox(t *testing.T) {
	testenv.Need(t, "node", "a runtime must exist for the sandbox to be what is missing")
	node, _ := filepath.EvalSymlinks(testenv.Need(t, "node", ""))
	npm := testenv.Need(t, "npm", "")
	bin := t.TempDir()
	for _, tool := range []string{node, npm} {
		if err := os.Symlink(tool, filepath.Join(bin, filepath.Base(tool))); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	remote := crawltest.StreamableServer(t, crawltest.GenTools(2, "remote"), 2, false)
	list := remote.URL + "\nnpm:tiny-good@1.0.0\nnpm:tiny-other@2.0.0\npypi:tiny@1.0\nnuget:Tiny@1.0\n"
	cands, err := ParseCandidates(strings.NewReader(list), "list")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	opt := Options{CandidateList: cands, Out: out, AllowPrivate: true, Packages: runners.Options{Cache: t.TempDir()}}
	sum, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reachable != 1 || sum.UnreachableByKind[probe.KindNoSandbox] != 3 || sum.UnreachableByKind[probe.KindNoRuntime] != 1 {
		t.Errorf("%+v; want the remote reachable, 3 no_sandbox (npm and PyPI), 1 no_runtime (NuGet)", sum)
	}
	s := readServers(t, out)["npm:tiny-good@1.0.0"]
	if s.ErrorKind != probe.KindNoSandbox || !strings.Contains(s.Error, "bwrap") || !strings.Contains(s.Error, "apt-get install") {
		t.Errorf("record %s: %s; want no_sandbox naming bwrap and how to install it", s.ErrorKind, s.Error)
	}

	opt.Out, opt.NoPackages = t.TempDir(), true
	sum, err = Run(context.Background(), opt)
	if err != nil || sum.Servers != 1 || sum.Reachable != 1 || sum.PackagesLeftOut != 4 {
		t.Errorf("--no-packages: %+v, %v; want the remote alone, 4 packages left out", sum, err)
	}
}

// TestCrawlRerunAfterFailedStart: a crawl that stopped before probing
// anything (here a package cache that cannot be made) does not block a
// rerun with other options.
func TestCrawlRerunAfterFailedStart(t *testing.T) {
	npmtest.NeedSandbox(t)
	remote := crawltest.StreamableServer(t, crawltest.GenTools(2, "remote"), 2, false)
	cands, err := ParseCandidates(strings.NewReader(remote.URL+"\nnpm:tiny-good@1.0.0\n"), "list")
	if err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	npmtest.Use(t, "http://127.0.0.1:9/")
	opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, Packages: runners.Options{Cache: filepath.Join(notDir, "cache")}}
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "package cache") {
		t.Fatalf("err %v, want the package cache's", err)
	}
	opt.NoPackages = true
	if sum, err := Run(context.Background(), opt); err != nil || sum.Reachable != 1 {
		t.Fatalf("rerun with --no-packages: %+v, %v", sum, err)
	}
}

// TestPackageCandidates: package lines read back as written, and bad
// coordinates are errors naming the line.
func TestPackageCandidates(t *testing.T) {
	p := &runners.Package{RegistryType: "npm", Identifier: "@s/n", Version: "1.2.3", Transport: "stdio", RuntimeHint: "npx",
		Env: []runners.EnvVar{{Name: "K", Required: true, Secret: true}}}
	rec := runners.PackageRecord(p, "https://r", "io.x/n", "1.0")
	want := `{"package": "npm:@s/n@1.2.3", "registry_type": "npm", "identifier": "@s/n", "package_version": "1.2.3", "transport": "stdio", "runtime_hint": "npx", "environment_variables": [{"name": "K", "required": true, "secret": true}], "registry": "https://r", "name": "io.x/n", "version": "1.0"}`
	if string(rec) != want {
		t.Errorf("record\n%s\nwant\n%s", rec, want)
	}
	for _, tc := range []struct {
		in, id, err string
	}{
		{string(rec), "npm:@s/n@1.2.3", ""},
		{"npm:@s/n@1.2.3", "npm:@s/n@1.2.3", ""},
		{`{"package": "pypi:x@1"}`, "pypi:x@1", ""},
		{`{"package": "npm:@s/n"}`, "", "exact version"},
		{`{"package": "npm:a@1", "registry_type": "npm", "identifier": "b", "package_version": "1"}`, "", "does not match"},
	} {
		cands, err := ParseCandidates(strings.NewReader(tc.in+"\n"), "list")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "list:1") {
				t.Errorf("%s: err %v, want %q at list:1", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || cands[0].Package == nil || cands[0].Package.ID() != tc.id {
			t.Errorf("%s: %+v, %v", tc.in, cands, err)
		}
	}
}

// TestRegistryPackages: every package of the latest active entry becomes a
// candidate beside its remotes, with the entry's provenance; a duplicate
// coordinate is kept once and an incomplete package is kept with why.
func TestRegistryPackages(t *testing.T) {
	entries := []map[string]any{
		pkgEntry("io.test/both", []map[string]any{{"type": "streamable-http", "url": "https://example.org/mcp"}},
			npmPkg("@s/both", "1.2.3", map[string]any{
				"environmentVariables": []map[string]any{{"name": "TOKEN", "isRequired": true, "isSecret": true}, {"name": "MODE", "default": "x"}},
				"runtimeArguments":     []map[string]any{{"type": "named", "name": "-y"}},
			}),
			map[string]any{"registryType": "pypi", "identifier": "both-py", "version": "0.1", "runtimeHint": "uvx", "transport": map[string]any{"type": "stdio"}}),
		pkgEntry("io.test/again", nil, npmPkg("@s/both", "1.2.3", nil), map[string]any{"registryType": "npm", "identifier": "no-version"}),
		pkgEntry("io.test/none", nil),
	}
	reg := crawltest.Serve(t, &standInRegistry{entries: entries, pageSize: 2})
	cands, st, err := FetchRegistry(context.Background(), RegistryOptions{URL: reg.URL})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cands {
		got = append(got, string(c.Record))
	}
	want := []string{
		`{"url": "https://example.org/mcp", "transport": "streamable-http", "registry": "` + reg.URL + `", "name": "io.test/both", "version": "1.0.0"}`,
		`{"package": "npm:@s/both@1.2.3", "registry_type": "npm", "identifier": "@s/both", "package_version": "1.2.3", "transport": "stdio", "runtime_hint": "npx", "runtime_arguments": [{"type": "named", "name": "-y"}], "environment_variables": [{"name": "TOKEN", "required": true, "secret": true}, {"name": "MODE", "default": "x"}], "registry_base_url": "https://registry.npmjs.org", "registry": "` + reg.URL + `", "name": "io.test/both", "version": "1.0.0"}`,
		`{"package": "pypi:both-py@0.1", "registry_type": "pypi", "identifier": "both-py", "package_version": "0.1", "transport": "stdio", "runtime_hint": "uvx", "registry": "` + reg.URL + `", "name": "io.test/both", "version": "1.0.0"}`,
		`{"package": "npm:no-version@#io.test/again", "registry_type": "npm", "identifier": "no-version", "package_version": "", "transport": "stdio", "invalid": "package without version: the entry names no exact version to install", "registry": "` + reg.URL + `", "name": "io.test/again", "version": "1.0.0"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("candidates\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantSkipped := map[string]int{skipPackageDuplicate: 1, skipNoRemotes: 1}
	if st.Packages != 4 || st.Kept != 4 || st.Invalid != 1 || !maps.Equal(st.Skipped, wantSkipped) {
		t.Errorf("stats %+v, want 4 packages, 4 kept (1 invalid), skipped %v", st, wantSkipped)
	}
	// The lines read back as the same packages.
	var b strings.Builder
	for _, l := range got {
		b.WriteString(l + "\n")
	}
	back, err := ParseCandidates(strings.NewReader(b.String()), "candidates")
	if err != nil || len(back) != 4 || back[1].Package.ID() != "npm:@s/both@1.2.3" || len(back[1].Package.Env) != 2 || back[1].Package.MissingConfig()[0] != "TOKEN" {
		t.Errorf("read back: %+v, %v", back, err)
	}
}
