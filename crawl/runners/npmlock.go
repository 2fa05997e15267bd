package runners

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// An npm install is two steps. npm resolves the package's dependency tree
// in the install sandbox and writes it as a lockfile, fetching packuments
// only (npm install --package-lock-only): where each dependency version
// goes, as npm's own install would place it. The crawl then lays the tree
// out itself from the package store (npmLayout): each tarball fetched
// once, checked against its integrity, unpacked once into the store, and
// hard-linked into every install that needs it. npm's own install would
// unpack every tarball again for each package, and the cache would copy
// and hash the result once more.

// lockPackage is one folder of an npm lockfile's tree (lockfileVersion
// 2 or 3, "packages"), at Path (node_modules/a/node_modules/b).
type lockPackage struct {
	Path      string            `json:"-"`
	Version   string            `json:"version"`
	Resolved  string            `json:"resolved"`
	Integrity string            `json:"integrity"`
	Link      bool              `json:"link"`
	Optional  bool              `json:"optional"`
	InBundle  bool              `json:"inBundle"`
	Bin       map[string]string `json:"bin"`

	Dependencies         map[string]string `json:"dependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
}

// folder splits p's path at its last node_modules: the folder p is in
// (node_modules/a/node_modules) and p's package name there (@s/b).
func (p lockPackage) folder() (nodeModules, name string) {
	i := strings.LastIndex(p.Path, "node_modules/")
	return p.Path[:i+len("node_modules")], p.Path[i+len("node_modules/"):]
}

// maxLockfile caps the lockfile read: one of thousands of dependencies is
// a few MB.
const maxLockfile = 64 << 20

// npmChecks runs in the install sandbox after npm has resolved the tree:
// it lists the optional folders npm's install would skip on this machine
// (their engines or platform do not match, by npm's own checks), and
// fails, as npm's install fails, on a required folder whose platform does
// not match. Arguments: the lockfile and npm's folder.
const npmChecks = `
const [lockFile, npmRoot] = process.argv.slice(1);
const path = require("path");
const {checkEngine, checkPlatform} = require(path.join(npmRoot, "node_modules/npm-install-checks"));
const npmVersion = require(path.join(npmRoot, "package.json")).version;
const lock = JSON.parse(require("fs").readFileSync(lockFile, "utf8"));
const skip = [];
for (const [p, e] of Object.entries(lock.packages || {})) {
  if (!p) continue;
  try {
    if (e.optional) checkEngine(e, npmVersion, process.version, false);
    checkPlatform(e, false);
  } catch (err) {
    if (!e.optional) {
      console.error(err.code + ": " + p + "@" + e.version + " does not run on " + JSON.stringify(err.current));
      process.exit(1);
    }
    skip.push(p);
  }
}
process.stdout.write(JSON.stringify(skip));
`

// readLockfile reads the tree npm resolved: every folder to lay out, in
// path order (a folder before those inside it). It leaves out what npm's
// install leaves out: the folders of skip (optional ones npmChecks found
// this machine cannot run) and what only they need, the folders bundled
// in their parent's tarball, and anything no dependency of the root's
// reaches (development dependencies among them: npm's --omit=dev).
func readLockfile(dir string, skip []string) ([]lockPackage, error) {
	b, err := readInRoot(dir, "package-lock.json", maxLockfile)
	if err != nil {
		return nil, err
	}
	var lock struct {
		Version  int                     `json:"lockfileVersion"`
		Packages map[string]*lockPackage `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return nil, fmt.Errorf("npm's lockfile: %v", err)
	}
	root := lock.Packages[""]
	if lock.Version < 2 || root == nil {
		return nil, fmt.Errorf("npm's lockfile: version %d, without \"packages\"", lock.Version)
	}
	for p, e := range lock.Packages {
		if p != "" && (e == nil || !lockPath(p)) {
			return nil, fmt.Errorf("npm's lockfile: %q is not a folder under node_modules", p)
		}
	}
	skipped := map[string]bool{}
	for _, p := range skip {
		skipped[p] = true
	}
	// The folders the root's dependencies reach, by node's resolution
	// (the nearest node_modules/NAME up the tree), not through a skipped
	// one.
	reached := map[string]bool{}
	queue := []string{""}
	for len(queue) > 0 {
		from := queue[0]
		queue = queue[1:]
		e := lock.Packages[from]
		for _, deps := range []map[string]string{e.Dependencies, e.OptionalDependencies, e.PeerDependencies} {
			for name := range deps {
				to := resolveFrom(lock.Packages, from, name)
				if to == "" || reached[to] || skipped[to] {
					continue
				}
				reached[to] = true
				queue = append(queue, to)
			}
		}
	}
	var out []lockPackage
	for p, e := range lock.Packages {
		if !reached[p] || e.InBundle {
			continue
		}
		if e.Link {
			return nil, fmt.Errorf("npm's lockfile: %s links to a folder, not a registry package", p)
		}
		e.Path = p
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// resolveFrom is the folder node loads package name from when required
// by the folder from: the nearest node_modules/name up the tree, or "".
func resolveFrom(pkgs map[string]*lockPackage, from, name string) string {
	for {
		cand := "node_modules/" + name
		if from != "" {
			cand = from + "/" + cand
		}
		if _, ok := pkgs[cand]; ok {
			return cand
		}
		if from == "" {
			return ""
		}
		i := strings.LastIndex(from, "/node_modules/")
		if i < 0 {
			from = ""
		} else {
			from = from[:i]
		}
	}
}

// lockPath says whether p is a clean folder path of a lockfile's tree:
// node_modules/NAME or node_modules/@SCOPE/NAME, nested under other such
// folders, nothing else.
func lockPath(p string) bool {
	parts := strings.Split(p, "/")
	for i := 0; i < len(parts); i++ {
		if parts[i] != "node_modules" || i+1 >= len(parts) {
			return false
		}
		i++
		if strings.HasPrefix(parts[i], "@") {
			if !lockName.MatchString(parts[i][1:]) || i+1 >= len(parts) {
				return false
			}
			i++
		}
		if !lockName.MatchString(parts[i]) {
			return false
		}
	}
	return true
}

// lockName is a name a lockfile folder may have: npm's package name
// characters, not starting with a dot (so neither "." nor "..").
var lockName = regexp.MustCompile(`^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$`)
