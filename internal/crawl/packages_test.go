package crawl

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
)

// serverJS is a tiny MCP server over stdio with no dependencies: plain
// JSON-RPC, one message a line, tools/list two tools a page. The prelude
// runs first and calls serve() when the server should answer; notes are
// served as extra tools, so that what the prelude saw shows in the census.
const serverJS = `#!/usr/bin/env node
"use strict";
const readline = require("readline");
const notes = [];
const TOOLS = %s;
function serve() {
  const rl = readline.createInterface({input: process.stdin});
  rl.on("line", (line) => {
    let msg;
    try { msg = JSON.parse(line); } catch (e) { return; }
    if (msg.id === undefined || msg.id === null) return;
    let result;
    if (msg.method === "initialize") {
      result = {protocolVersion: msg.params.protocolVersion, capabilities: {tools: {}}, serverInfo: {name: "tiny", version: "1.0.0"}};
    } else if (msg.method === "tools/list") {
      const all = TOOLS.concat(notes.map((n) => ({name: n, inputSchema: {type: "object"}})));
      const start = msg.params && msg.params.cursor ? Number(msg.params.cursor) : 0;
      result = {tools: all.slice(start, start + 2)};
      if (start + 2 < all.length) result.nextCursor = String(start + 2);
    } else {
      process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: msg.id, error: {code: -32601, message: "no such method"}}) + "\n");
      return;
    }
    process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: msg.id, result}) + "\n");
  });
}
%s
`

// threeTools are the tools every test server serves, one of each kind the
// labeller tells apart.
const threeTools = `[
  {"name": "read_file", "description": "Read a file", "inputSchema": {"type": "object", "properties": {"file_path": {"type": "string", "description": "path of the file"}}, "required": ["file_path"]}},
  {"name": "run", "inputSchema": {"type": "object", "properties": {"command": {"type": "string", "description": "shell command to run"}}}},
  {"name": "noop", "inputSchema": {"type": "object"}}
]`

// testPackage is one npm package of the loopback npm registry.
type testPackage struct {
	name, version, prelude string
	scripts                map[string]string
}

// tarball is the package's .tgz: package/package.json and
// package/server.js, as npm pack lays them out.
func (p testPackage) tarball(t *testing.T) []byte {
	t.Helper()
	if p.scripts == nil {
		p.scripts = map[string]string{}
	}
	base := p.name[strings.LastIndex(p.name, "/")+1:]
	pj, _ := json.Marshal(map[string]any{"name": p.name, "version": p.version, "bin": map[string]string{base: "server.js"}, "scripts": p.scripts})
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		body []byte
		mode int64
	}{{"package/package.json", pj, 0o644}, {"package/server.js", []byte(fmt.Sprintf(serverJS, threeTools, p.prelude)), 0o755}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(f.body)
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// npmRegistry serves packuments and tarballs of pkgs on loopback, as the
// npm registry does, and says how many tarballs were fetched.
func npmRegistry(t *testing.T, pkgs []testPackage) (string, *atomic.Int64) {
	t.Helper()
	tarballs := map[string][]byte{}
	packuments := map[string]map[string]any{}
	var fetched atomic.Int64
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	for _, p := range pkgs {
		tgz := p.tarball(t)
		file := strings.NewReplacer("@", "", "/", "-").Replace(p.name) + "-" + p.version + ".tgz"
		tarballs[file] = tgz
		s1 := sha1.Sum(tgz)
		s512 := sha512.Sum512(tgz)
		base := p.name[strings.LastIndex(p.name, "/")+1:]
		if p.scripts == nil {
			p.scripts = map[string]string{}
		}
		doc := packuments[p.name]
		if doc == nil {
			doc = map[string]any{"name": p.name, "dist-tags": map[string]string{"latest": p.version}, "versions": map[string]any{}}
			packuments[p.name] = doc
		}
		doc["versions"].(map[string]any)[p.version] = map[string]any{
			"name": p.name, "version": p.version, "bin": map[string]string{base: "server.js"}, "scripts": p.scripts,
			"dist": map[string]string{"tarball": srv.URL + "/tarballs/" + file, "shasum": hex.EncodeToString(s1[:]),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:])},
		}
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if file, ok := strings.CutPrefix(r.URL.Path, "/tarballs/"); ok {
			b, found := tarballs[file]
			if !found {
				http.NotFound(w, r)
				return
			}
			fetched.Add(1)
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(b)
			return
		}
		doc, found := packuments[strings.TrimPrefix(r.URL.Path, "/")]
		if !found {
			http.Error(w, `{"error":"Not found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	})
	return srv.URL + "/", &fetched
}

// needSandbox skips (fails with CI=true) without bwrap, node or npm.
func needSandbox(t *testing.T) {
	t.Helper()
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	testenv.Need(t, "node", "the runtime of the npm test servers")
	testenv.Need(t, "npm", "the installer of the npm test servers")
}

// useNPMRegistry points npm at the loopback registry and nothing else of
// the machine's configuration.
func useNPMRegistry(t *testing.T, url string) {
	t.Helper()
	d := t.TempDir()
	t.Setenv("npm_config_registry", url)
	for _, c := range []string{"userconfig", "globalconfig"} {
		rc := filepath.Join(d, c)
		if err := os.WriteFile(rc, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("npm_config_"+c, rc)
	}
}

// hostile is the census of packages the crawl test serves: a good one,
// and one for each way a stranger's package can misbehave.
type hostile struct {
	netPort  int
	secret   string // a file standing in for ~/.ssh/id_rsa
	outside  string // a file no package may create
	scripted string // the file the install scripts would create
}

func (h hostile) packages() []testPackage {
	writeMark := fmt.Sprintf(`node -e "require('fs').writeFileSync('%s','ran')"`, h.scripted)
	return []testPackage{
		{name: "@tiny/good", version: "1.0.0", prelude: `notes.push("mode_" + process.env.MODE, "leak_" + (process.env.SANDBOX_LEAK || "none"), "argv_" + process.argv.slice(2).join("_")); serve();`},
		{name: "tiny-net", version: "1.0.0", prelude: fmt.Sprintf(`const s = require("net").connect({host: "127.0.0.1", port: %d});
s.on("connect", () => { notes.push("net_connected"); serve(); });
s.on("error", (e) => { notes.push("net_" + e.code); serve(); });`, h.netPort)},
		{name: "tiny-files", version: "1.0.0", prelude: fmt.Sprintf(`const fs = require("fs");
for (const [n, f] of [["ssh", () => fs.readFileSync(%q)], ["homessh", () => fs.readdirSync(require("os").homedir() + "/.ssh")], ["write", () => fs.writeFileSync(%q, "x")], ["pkgwrite", () => fs.writeFileSync(__filename, "x")]]) {
  try { f(); notes.push(n + "_ok"); } catch (e) { notes.push(n + "_" + e.code); }
}
serve();`, h.secret, h.outside)},
		{name: "tiny-child", version: "1.0.0", prelude: `require("child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {detached: true, stdio: "ignore"}).unref(); serve();`},
		{name: "tiny-scripts", version: "1.0.0", prelude: `serve();`,
			scripts: map[string]string{"preinstall": writeMark, "install": writeMark, "postinstall": writeMark, "prepare": writeMark}},
		{name: "tiny-garbage", version: "1.0.0", prelude: `process.stdout.write("this is not JSON\n"); serve();`},
		{name: "tiny-silent", version: "1.0.0", prelude: `process.stdin.resume();`},
		{name: "tiny-flood", version: "1.0.0", prelude: `process.stdout.write('{"jsonrpc": "2.0", "id": 1, "result": {"x": "'); const b = Buffer.alloc(1 << 20, 120); let n = 0;
(function w() { while (n < 1024) { n++; if (!process.stdout.write(b)) { process.stdout.once("drain", w); return; } } })();`},
		{name: "tiny-crash", version: "1.0.0", prelude: `console.error("boom"); process.exit(3);`},
		{name: "tiny-config", version: "1.0.0", prelude: `if (!process.env.API_KEY) { console.error("API_KEY is not set"); process.exit(1); } serve();`},
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
	needSandbox(t)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var connections atomic.Int64
	go func() {
		for {
			c, err := listener.Accept()
			if err != nil {
				return
			}
			connections.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { listener.Close() })
	dir := t.TempDir()
	h := hostile{netPort: listener.Addr().(*net.TCPAddr).Port, secret: filepath.Join(dir, "ssh", "id_rsa"),
		outside: filepath.Join(dir, "outside"), scripted: filepath.Join(dir, "scripts-ran")}
	os.MkdirAll(filepath.Dir(h.secret), 0o700)
	if err := os.WriteFile(h.secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	npmURL, fetched := npmRegistry(t, h.packages())
	useNPMRegistry(t, npmURL)
	t.Setenv("SANDBOX_LEAK", "the crawl's own environment")
	t.Setenv("API_KEY", "a secret of the user's") // never handed on

	remote := streamableServer(t, genTools(3, "remote"), 2, false)
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
		if p.name == "tiny-config" {
			extra["environmentVariables"] = []map[string]any{{"name": "API_KEY", "isRequired": true, "isSecret": true}}
		}
		entries = append(entries, pkgEntry("io.test/"+p.name, nil, npmPkg(p.name, p.version, extra)))
	}
	entries = append(entries,
		pkgEntry("io.test/missing", nil, npmPkg("tiny-missing", "9.9.9", nil)),
		pkgEntry("io.test/py", nil, map[string]any{"registryType": "pypi", "identifier": "tiny-py", "version": "1.0", "runtimeHint": "uvx", "transport": map[string]any{"type": "stdio"}}),
		pkgEntry("io.test/oci", nil, map[string]any{"registryType": "oci", "identifier": "docker.io/tiny/oci", "version": "1.0", "transport": map[string]any{"type": "stdio"}}),
		pkgEntry("io.test/nuget", nil, map[string]any{"registryType": "nuget", "identifier": "Tiny.Nuget", "version": "1.0", "transport": map[string]any{"type": "stdio"}}),
		pkgEntry("io.test/mcpb", nil, map[string]any{"registryType": "mcpb", "identifier": "https://example.org/tiny.mcpb", "version": "1.0", "transport": map[string]any{"type": "stdio"}}),
		pkgEntry("io.test/http-pkg", nil, npmPkg("tiny-http", "1.0.0", map[string]any{"transport": map[string]any{"type": "streamable-http", "url": "http://localhost:8080/mcp"}})),
	)
	reg := serve(t, &standInRegistry{entries: entries, pageSize: 5})
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

	cache := t.TempDir()
	opt := Options{CandidateList: cands, Out: t.TempDir(), AllowPrivate: true, OmitElapsed: true,
		Probe:    ProbeOptions{Timeout: crawlTimeout, MaxBytes: 4 << 20},
		Packages: PackageOptions{Cache: cache, Limits: sandbox.Limits{Memory: 4 << 30}}}
	sum, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	wantKinds := map[string]int{
		KindTimeout: 1, KindTooManyBytes: 1, KindInvalidJSON: 1, KindExited: 1, KindNeedsConfig: 1,
		KindInstall: 1, KindNoRuntime: 5,
	}
	if sum.Reachable != 6 || sum.Servers != 17 || !maps.Equal(sum.UnreachableByKind, wantKinds) {
		t.Errorf("reachable %d of %d servers, unreachable by kind %v; want 6 of 17, %v", sum.Reachable, sum.Servers, sum.UnreachableByKind, wantKinds)
	}
	servers := readServers(t, opt.Out)
	want := map[string][]string{
		"npm:@tiny/good@1.0.0":       {"read_file", "run", "noop", "mode_fast", "leak_none", "argv_serve_--level_3"},
		"npm:tiny-net@1.0.0":         {"read_file", "run", "noop", "net_ECONNREFUSED"},
		"npm:tiny-files@1.0.0":       {"read_file", "run", "noop", "ssh_ENOENT", "homessh_ENOENT", "write_ENOENT", "pkgwrite_EROFS"},
		"npm:tiny-child@1.0.0":       {"read_file", "run", "noop"},
		"npm:tiny-scripts@1.0.0":     {"read_file", "run", "noop"},
		"npm:tiny-silent@1.0.0":      nil,
		"npm:tiny-config@1.0.0":      nil,
		"npm:tiny-missing@9.9.9":     nil,
		"pypi:tiny-py@1.0":           nil,
		"npm:tiny-garbage@1.0.0":     nil,
		"npm:tiny-flood@1.0.0":       nil,
		"npm:tiny-crash@1.0.0":       nil,
		"npm:tiny-http@1.0.0":        nil,
		"nuget:Tiny.Nuget@1.0":       nil,
		"oci:docker.io/tiny/oci@1.0": nil,
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
		if !s.Reachable || !slices.Equal(s.tools, names) || s.Transport != TransportStdio || s.Package != id {
			t.Errorf("%s: reachable %v over %q, tools %v; want %v (%s: %s)", id, s.Reachable, s.Transport, s.tools, names, s.ErrorKind, s.Error)
		}
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
	for slot := range DefaultPackageConcurrency {
		if left := sandbox.ProcessesOf(SandboxUID(slot)); len(left) > 0 {
			t.Errorf("slot %d: processes left behind: %v", slot, left)
		}
	}

	// The release runs through run with exact counts: 3 tools of the
	// remote, and the packages' tools above.
	m, err := hashverify.ReadSHA256Sums(filepath.Join(opt.Out, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.Run(context.Background(), pipeline.Options{Data: opt.Out, Out: t.TempDir(), Manifest: m, ManifestName: SumsFile})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Verified || rep.Servers != 6 || rep.Tools != 3+6+4+7+3+3 || rep.Release == nil || rep.Release.Counts.UnreachableByKind[KindNoRuntime] != 5 {
		t.Errorf("run: verified %v, %d servers, %d tools, release %+v; want 6 servers, 26 tools", rep.Verified, rep.Servers, rep.Tools, rep.Release)
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

// TestCrawlPackagesWithoutSandbox: with no bwrap on PATH, a crawl with an
// npm package refuses to start, saying what to install, and runs nothing.
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
	cands, err := ParseCandidates(strings.NewReader("npm:tiny-good@1.0.0\npypi:tiny@1.0\n"), "list")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, err = Run(context.Background(), Options{CandidateList: cands, Out: out, Packages: PackageOptions{Cache: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "bwrap") || !strings.Contains(err.Error(), "apt-get install") {
		t.Fatalf("err = %v, want a refusal naming bwrap and how to install it", err)
	}
	if _, err := os.Stat(filepath.Join(out, hashverify.ServersFile)); err == nil {
		t.Error("a release was written")
	}
}

// TestPackageCandidates: package lines read back as written, and bad
// coordinates are errors naming the line.
func TestPackageCandidates(t *testing.T) {
	p := &Package{RegistryType: "npm", Identifier: "@s/n", Version: "1.2.3", Transport: "stdio", RuntimeHint: "npx",
		Env: []EnvVar{{Name: "K", Required: true, Secret: true}}}
	rec := packageRecord(p, "https://r", "io.x/n", "1.0")
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
