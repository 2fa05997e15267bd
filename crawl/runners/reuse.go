package runners

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// A server run in the sandbox sees nothing but its installed folder
// (read-only), the runtime that runs it, its arguments and environment,
// the sandbox's bounds, and the probe's requests: no network, no host
// files. A run's outcome is kept beside the cache folder, and a later
// crawl with Options.ReuseRecords that finds the same install of the
// folder under the same conditions takes it instead of running the server
// again. That is what makes a month's crawl cost what changed: an
// unchanged package is neither fetched, nor installed, nor run.
//
// The conditions are everything else a record can depend on, hashed
// together: this program's executable (the probe's client and its
// protocol revisions), the runtimes the sandbox runs (node, python), the
// sandbox spec (argv, environment, mounts, bounds) and the crawl's record
// options (Options.Conditions). Only outcomes the server's code decides
// are kept: a listing, an exit, a protocol failure, a bound passed; never
// a timeout, which the machine's load can cause. An npm install that
// failed in a settled way (installError.settled) is kept the same way,
// under the install's own conditions, until the folder is installed.

// recordsDir holds, in the package cache, the last kept outcome of each
// cache folder, one file each named by the folder's key.
const recordsDir = ".records"

// keptRecord is a run's outcome as recordsDir keeps it, or an npm
// install's settled failure.
type keptRecord struct {
	// Install is the id of the install of the folder that ran
	// (installed.id): a folder installed again runs again. It is empty
	// for a failed install, which has no folder.
	Install string `json:"install"`
	// Conditions is the hash of the run's conditions (Set.conditions).
	Conditions string       `json:"conditions"`
	Result     probe.Result `json:"result"`
}

// runServer lists the tools of the server spec runs in the installed
// folder in: with ReuseRecords, from the outcome kept of the same install
// under the same conditions, when there is one, else by running it; what
// the server decided is kept for the next crawl either way. The caller
// holds in until it returns.
func (pr *Set) runServer(ctx context.Context, in installed, spec sandbox.Spec, info *probe.RunnerInfo, pkg *Package) probe.Result {
	var cond string
	if in.id != "" {
		cond = pr.conditions(spec)
	}
	if pr.reuse && cond != "" {
		if r, ok := pr.cache.keptRecord(in, cond); ok {
			pr.reused.Add(1)
			r.Runner = info
			return needsConfig(pkg, r)
		}
	}
	r := pr.p.Command(ctx, sandboxed(pr.sb, spec))
	if cond != "" && ctx.Err() == nil && decidedByServer(r) {
		pr.cache.keepRecord(in, cond, r)
	}
	r.Runner = info
	return needsConfig(pkg, r)
}

// decidedByServer says r is what the server's code makes of the probe,
// whatever the machine's load: a listing, an exit, an answer the protocol
// forbids, a bound passed.
func decidedByServer(r probe.Result) bool {
	if r.Reachable {
		return true
	}
	switch r.ErrorKind {
	case probe.KindExited, probe.KindInvalidJSON, probe.KindRPCError, probe.KindProtocol, probe.KindInvalidTools,
		probe.KindTooManyTools, probe.KindTooManyBytes, probe.KindTooManyPages, probe.KindCursorLoop, probe.KindMemory:
		return true
	}
	return false
}

// Reused is how many records the crawl took from earlier runs.
func (pr *Set) Reused() int64 {
	if pr == nil {
		return 0
	}
	return pr.reused.Load()
}

// conditions is the hash of what a run of spec depends on besides its
// folder.
func (pr *Set) conditions(spec sandbox.Spec) string {
	b, _ := json.Marshal(struct {
		Crawl    string
		Program  string
		Runtimes []string
		Spec     sandbox.Spec
	}{pr.conditionsOf, pr.runtimes.sum(exePath()), []string{pr.runtimes.sum(pr.node), pr.runtimes.sum(pr.pythonPath())}, spec})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (pr *Set) pythonPath() string {
	if pr.python == nil {
		return ""
	}
	return pr.python.python
}

func exePath() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

// fileSums hashes files once each: a runtime's or this program's bytes
// stand for their version.
type fileSums struct {
	mu   sync.Mutex
	sums map[string]string // path -> SHA-256, or the error reading it
}

func (f *fileSums) sum(path string) string {
	if path == "" {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.sums[path]; ok {
		return s
	}
	s, err := openreg.Sum(path, sha256.New())
	if err != nil {
		s = "unreadable: " + err.Error()
	}
	if f.sums == nil {
		f.sums = map[string]string{}
	}
	f.sums[path] = s
	return s
}

// installConditions is the hash of what an npm install's outcome
// depends on besides the registry's answers: this program, node, npm's
// version, the registry and npm's TLS settings, the bounds, and the
// crawl's record options.
func (pr *Set) installConditions() string {
	c := pr.cache
	npmPackage := filepath.Join(filepath.Dir(filepath.Dir(c.npmCLI)), "package.json")
	b, _ := json.Marshal(struct {
		Crawl, Program, Node, NPM, Registry string
		TLS                                 []string
		MaxPackage, Memory                  int64
	}{pr.conditionsOf, pr.runtimes.sum(exePath()), pr.runtimes.sum(pr.node), pr.runtimes.sum(npmPackage), c.registry,
		c.confEnv, c.maxPackage, c.memory})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// keptFailure is the settled failure kept of key's install under cond,
// unless the folder has been installed since.
func (c *npmCache) keptFailure(key, cond string) (probe.Result, bool) {
	if _, _, err := readComplete(filepath.Join(c.dir, key)); err == nil {
		return probe.Result{}, false
	}
	return c.keptRecord(installed{key: key}, cond)
}

// keepFailure keeps r, the record of key's install that failed in a
// settled way (installError.settled), under cond.
func (c *npmCache) keepFailure(key, cond string, r probe.Result) {
	c.keepRecord(installed{key: key}, cond, r)
}

func (c *npmCache) recordPath(key string) string {
	return filepath.Join(c.dir, recordsDir, key+".json")
}

// keptRecord is the outcome kept of in's install under cond, if any.
func (c *npmCache) keptRecord(in installed, cond string) (probe.Result, bool) {
	b, err := os.ReadFile(c.recordPath(in.key))
	if err != nil {
		return probe.Result{}, false
	}
	var k keptRecord
	if json.Unmarshal(b, &k) != nil || k.Install != in.id || k.Conditions != cond {
		return probe.Result{}, false
	}
	return k.Result, true
}

// keepRecord keeps r as the outcome of in's install under cond. A record
// that cannot be written is only not kept: the next crawl runs the
// server again.
func (c *npmCache) keepRecord(in installed, cond string, r probe.Result) {
	r.Runner = nil
	// The answer's raw JSON is kept byte for byte: compact already, and
	// not HTML-escaped, as the release writes it.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(keptRecord{Install: in.id, Conditions: cond, Result: r}) != nil {
		return
	}
	if err := os.MkdirAll(filepath.Join(c.dir, recordsDir), 0o700); err == nil {
		_ = outset.WriteFile(c.recordPath(in.key), b.Bytes(), 0o600)
	}
}
