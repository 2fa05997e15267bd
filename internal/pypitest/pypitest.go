// Package pypitest serves a PEP 503 simple index on loopback for tests,
// with wheels built in memory from the files the test names: nothing is
// fetched from outside, and no build tool runs.
package pypitest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Dist is one distribution file of a project on the index.
type Dist struct {
	Project, Version string
	// Files are the wheel's files beside its .dist-info (module code,
	// .pth files); nil with SdistOnly.
	Files map[string]string
	// ConsoleScripts are entry points, NAME: "module:function".
	ConsoleScripts map[string]string
	// Requires are Requires-Dist lines; RequiresPython the
	// Requires-Python the metadata and the index announce.
	Requires       []string
	RequiresPython string
	// SdistOnly serves a source archive and no wheel.
	SdistOnly bool
}

var sep = regexp.MustCompile(`[-_.]+`)

// Normalize is a name as PEP 503 compares them.
func Normalize(n string) string { return strings.ToLower(sep.ReplaceAllString(n, "-")) }

func underscore(n string) string { return sep.ReplaceAllString(n, "_") }

// Wheel builds the wheel of d: its file name and bytes.
func Wheel(t testing.TB, d Dist) (string, []byte) {
	t.Helper()
	dist := underscore(d.Project) + "-" + d.Version + ".dist-info"
	files := map[string]string{}
	for k, v := range d.Files {
		files[k] = v
	}
	meta := "Metadata-Version: 2.1\nName: " + d.Project + "\nVersion: " + d.Version + "\n"
	if d.RequiresPython != "" {
		meta += "Requires-Python: " + d.RequiresPython + "\n"
	}
	for _, r := range d.Requires {
		meta += "Requires-Dist: " + r + "\n"
	}
	files[dist+"/METADATA"] = meta
	files[dist+"/WHEEL"] = "Wheel-Version: 1.0\nGenerator: pypitest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	if len(d.ConsoleScripts) > 0 {
		ep := "[console_scripts]\n"
		for k, v := range d.ConsoleScripts {
			ep += k + " = " + v + "\n"
		}
		files[dist+"/entry_points.txt"] = ep
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		h := sha256.Sum256([]byte(files[n]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(h[:]), len(files[n]))
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[n]))
	}
	record.WriteString(dist + "/RECORD,,\n")
	w, err := zw.Create(dist + "/RECORD")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return underscore(d.Project) + "-" + d.Version + "-py3-none-any.whl", buf.Bytes()
}

// Index is a simple index on loopback.
type Index struct {
	// URL is the index's URL, for PIP_INDEX_URL.
	URL string

	mu      sync.Mutex
	fetched map[string]int
}

// Fetched is how many times a file was downloaded.
func (ix *Index) Fetched(file string) int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.fetched[file]
}

// Serve starts an index of dists, closed when the test ends.
func Serve(t testing.TB, dists ...Dist) *Index {
	t.Helper()
	type file struct {
		name, python string
		body         []byte
	}
	projects := map[string][]file{}
	bodies := map[string][]byte{}
	for _, d := range dists {
		var f file
		if d.SdistOnly {
			f = file{name: underscore(d.Project) + "-" + d.Version + ".tar.gz", body: []byte("not built")}
		} else {
			f.name, f.body = Wheel(t, d)
		}
		f.python = d.RequiresPython
		projects[Normalize(d.Project)] = append(projects[Normalize(d.Project)], f)
		bodies[f.name] = f.body
	}
	ix := &Index{fetched: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/files/"):
			name := strings.TrimPrefix(p, "/files/")
			b, ok := bodies[name]
			if !ok {
				http.NotFound(w, r)
				return
			}
			ix.mu.Lock()
			ix.fetched[name]++
			ix.mu.Unlock()
			w.Write(b)
		case strings.HasPrefix(p, "/simple/"):
			name := Normalize(strings.Trim(strings.TrimPrefix(p, "/simple/"), "/"))
			fs, ok := projects[name]
			if !ok {
				http.NotFound(w, r)
				return
			}
			if !strings.HasSuffix(p, "/") {
				http.Redirect(w, r, p+"/", http.StatusMovedPermanently)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<!DOCTYPE html><html><body>\n")
			for _, f := range fs {
				h := sha256.Sum256(f.body)
				attr := ""
				if f.python != "" {
					attr = ` data-requires-python="` + html.EscapeString(f.python) + `"`
				}
				fmt.Fprintf(w, `<a href="/files/%s#sha256=%s"%s>%s</a><br/>`+"\n", f.name, hex.EncodeToString(h[:]), attr, f.name)
			}
			fmt.Fprintf(w, "</body></html>\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	ix.URL = srv.URL + "/simple"
	return ix
}

// StdioServer is the source of a module of an MCP server on Python's
// standard library alone, speaking newline-delimited JSON-RPC over stdio,
// whose main() lists one tool per note: notes is Python statements, at
// the indentation of main's body, that set notes, a list of strings (what
// the test wants to see of where and how it runs). name and version are
// its serverInfo.
func StdioServer(name, version, notes string) string {
	return `import json, os, sys

def main():
` + notes + `
    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in notes]
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if "id" not in req:
            continue
        if req.get("method") == "initialize":
            res = {"protocolVersion": req["params"]["protocolVersion"], "capabilities": {"tools": {}},
                   "serverInfo": {"name": ` + fmt.Sprintf("%q", name) + `, "version": ` + fmt.Sprintf("%q", version) + `}}
        elif req.get("method") == "tools/list":
            res = {"tools": tools}
        else:
            print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "no"}}), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": res}), flush=True)
`
}
