// Package npmtest serves npm packages of tiny MCP servers over stdio from a
// loopback npm registry (packuments and tarballs built in the test), for the
// tests of packaged servers.
package npmtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// ServerJS is a tiny MCP server over stdio with no dependencies: plain
// JSON-RPC, one message a line, tools/list two tools a page. The prelude
// runs first and calls serve() when the server should answer; notes are
// served as extra tools, so that what the prelude saw shows in the census.
const ServerJS = `#!/usr/bin/env node
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

// ThreeTools are the tools every test server serves, one of each kind the
// labeller tells apart.
const ThreeTools = `[
  {"name": "read_file", "description": "Read a file", "inputSchema": {"type": "object", "properties": {"file_path": {"type": "string", "description": "path of the file"}}, "required": ["file_path"]}},
  {"name": "run", "inputSchema": {"type": "object", "properties": {"command": {"type": "string", "description": "shell command to run"}}}},
  {"name": "noop", "inputSchema": {"type": "object"}}
]`

// Package is one npm package of the loopback npm registry: a tiny MCP
// server over stdio (see ServerJS).
type Package struct {
	// Name and Version are the package's; Prelude is the JavaScript run
	// before the server serves (it calls serve() to start); Scripts are
	// package.json's lifecycle scripts.
	Name, Version, Prelude string
	Scripts                map[string]string
	// Dependencies are package.json's, as written (a hostile package
	// names git remotes, URLs, files); OptionalDependencies too.
	Dependencies, OptionalDependencies map[string]string
	// OS is package.json's os: the platforms the package runs on.
	OS []string
	// Files are more files of the tarball, under package/.
	Files []File
}

// File is one more file of a package's tarball: Body, or Size zero bytes
// (a tarball bomb: it compresses to almost nothing); a folder with Dir, a
// symbolic link to Link.
type File struct {
	Name string
	Body []byte
	Size int64
	Mode int64
	Dir  bool
	Link string
}

// manifest is the package's package.json, which its packument repeats.
func (p Package) manifest() map[string]any {
	if p.Scripts == nil {
		p.Scripts = map[string]string{}
	}
	base := p.Name[strings.LastIndex(p.Name, "/")+1:]
	m := map[string]any{"name": p.Name, "version": p.Version, "bin": map[string]string{base: "server.js"}, "scripts": p.Scripts, "dependencies": p.Dependencies}
	if p.OptionalDependencies != nil {
		m["optionalDependencies"] = p.OptionalDependencies
	}
	if p.OS != nil {
		m["os"] = p.OS
	}
	return m
}

// tarball is the package's .tgz: package/package.json and
// package/server.js, as npm pack lays them out.
func (p Package) tarball(t testing.TB) []byte {
	t.Helper()
	pj, _ := json.Marshal(p.manifest())
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		body []byte
		mode int64
	}{{"package/package.json", pj, 0o644}, {"package/server.js", []byte(fmt.Sprintf(ServerJS, ThreeTools, p.Prelude)), 0o755}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(f.body)
	}
	for _, f := range p.Files {
		h := &tar.Header{Name: "package/" + f.Name, Mode: f.Mode, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if f.Dir {
			h.Typeflag = tar.TypeDir
		} else if f.Link != "" {
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
		} else if f.Body != nil {
			h.Size = int64(len(f.Body))
		} else {
			h.Size = f.Size
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if f.Body != nil {
			tw.Write(f.Body)
		} else if f.Size > 0 {
			zero := make([]byte, 1<<20)
			for n := f.Size; n > 0; n -= int64(len(zero)) {
				tw.Write(zero[:min(n, int64(len(zero)))])
			}
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// Registry serves packuments and tarballs of pkgs on loopback, as the
// npm registry does, and says how many tarballs were fetched.
func Registry(t testing.TB, pkgs []Package) (string, *atomic.Int64) {
	t.Helper()
	r := NewRegistry(t, pkgs, nil)
	return r.URL, &r.Tarballs
}

// RegistryTLS is Registry over https, presenting cert (a test CA's, say).
func RegistryTLS(t testing.TB, pkgs []Package, cert tls.Certificate) (string, *atomic.Int64) {
	t.Helper()
	r := NewRegistry(t, pkgs, &tls.Config{Certificates: []tls.Certificate{cert}})
	return r.URL, &r.Tarballs
}

// LoopbackRegistry is a loopback npm registry: packuments and tarballs,
// served as this machine's registry serves them (no caching headers, so
// npm's cache alone decides what it fetches again), with counts of what
// was fetched. Publish adds a version while it serves.
type LoopbackRegistry struct {
	// URL is the registry's, ending in a slash.
	URL string
	// Tarballs counts the tarballs fetched.
	Tarballs atomic.Int64

	t   testing.TB
	srv *httptest.Server

	mu         sync.Mutex // guards the three maps
	tarballs   map[string][]byte
	packuments map[string]map[string]any
	fetchedDoc map[string]int
}

// NewRegistry serves pkgs on loopback, over https with tc when it is not
// nil, until the test ends.
func NewRegistry(t testing.TB, pkgs []Package, tc *tls.Config) *LoopbackRegistry {
	t.Helper()
	r := &LoopbackRegistry{t: t, tarballs: map[string][]byte{}, packuments: map[string]map[string]any{}, fetchedDoc: map[string]int{}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	if tc != nil {
		r.srv.TLS = tc
		r.srv.StartTLS()
	} else {
		r.srv.Start()
	}
	t.Cleanup(r.srv.Close)
	r.URL = r.srv.URL + "/"
	for _, p := range pkgs {
		r.publish(p, false)
	}
	return r
}

// Publish adds p's version to its packument (made if new), with its
// tarball; it becomes the latest.
func (r *LoopbackRegistry) Publish(p Package) {
	r.t.Helper()
	r.publish(p, true)
}

// publish adds p; the first version of a name is its latest, and a later
// one when latest is true.
func (r *LoopbackRegistry) publish(p Package, latest bool) {
	r.t.Helper()
	tgz := p.tarball(r.t)
	file := strings.NewReplacer("@", "", "/", "-").Replace(p.Name) + "-" + p.Version + ".tgz"
	s1 := sha1.Sum(tgz)
	s512 := sha512.Sum512(tgz)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tarballs[file] = tgz
	doc := r.packuments[p.Name]
	if doc == nil {
		doc = map[string]any{"name": p.Name, "dist-tags": map[string]string{}, "versions": map[string]any{}}
		r.packuments[p.Name] = doc
	}
	if tags := doc["dist-tags"].(map[string]string); latest || tags["latest"] == "" {
		tags["latest"] = p.Version
	}
	version := p.manifest()
	version["dist"] = map[string]string{"tarball": r.srv.URL + "/tarballs/" + file, "shasum": hex.EncodeToString(s1[:]),
		"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:])}
	doc["versions"].(map[string]any)[p.Version] = version
}

// Packuments is how many times name's packument was fetched.
func (r *LoopbackRegistry) Packuments(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fetchedDoc[name]
}

func (r *LoopbackRegistry) serve(w http.ResponseWriter, req *http.Request) {
	if file, ok := strings.CutPrefix(req.URL.Path, "/tarballs/"); ok {
		r.mu.Lock()
		b, found := r.tarballs[file]
		r.mu.Unlock()
		if !found {
			http.NotFound(w, req)
			return
		}
		r.Tarballs.Add(1)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
		return
	}
	name := strings.TrimPrefix(req.URL.Path, "/")
	r.mu.Lock()
	doc, found := r.packuments[name]
	var body []byte
	if found {
		r.fetchedDoc[name]++
		body, _ = json.Marshal(doc)
	}
	r.mu.Unlock()
	if !found {
		http.Error(w, `{"error":"Not found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// NeedSandbox skips (fails with CI=true) without bwrap, node or npm, or
// where the sandbox cannot work (the skip names the setting that forbids
// unprivileged user namespaces).
func NeedSandbox(t testing.TB) {
	t.Helper()
	testenv.Need(t, "bwrap", "the sandbox of packaged servers; apt-get install -y bubblewrap")
	testenv.Need(t, "node", "the runtime of the npm test servers")
	testenv.Need(t, "npm", "the installer of the npm test servers")
	if _, err := sandbox.Find(context.Background()); err != nil {
		testenv.Missing(t, "no working sandbox: %v", err)
	}
}

// Use points npm at the loopback registry and nothing else of
// the machine's configuration.
func Use(t testing.TB, url string) {
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
