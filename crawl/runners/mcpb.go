package runners

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// bundleMount is where an unpacked bundle is seen in the sandbox: its
// manifest's ${__dirname}.
const bundleMount = "/bundle"

// maxBundleFiles bounds the entries of one bundle.
const maxBundleFiles = 100_000

// errPlainBundle is a bundle URL over plain HTTP that the address policy
// refuses: allowed only from a loopback host, with --allow-private.
var errPlainBundle = errors.New("a bundle is fetched over HTTPS (plain HTTP only from a loopback address, with --allow-private)")

// bundleManifest is the part of an MCPB manifest.json that says how to run
// the server. Its declared tools are never read: the server is asked.
type bundleManifest struct {
	Server struct {
		Type       string `json:"type"`
		EntryPoint string `json:"entry_point"`
		MCPConfig  *struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcp_config"`
	} `json:"server"`
	UserConfig map[string]struct {
		Default  any  `json:"default"`
		Required bool `json:"required"`
	} `json:"user_config"`
}

// mcpbRunner fetches MCPB bundles over HTTPS, checks them against the
// entry's fileSha256, unpacks them in the cache and runs their manifest's
// server: a binary of the bundle, or node or python3 on its entry point.
type mcpbRunner struct{}

func (*mcpbRunner) pinned() bool          { return true }
func (*mcpbRunner) find() string          { return "" }
func (*mcpbRunner) proxy() *sandbox.Proxy { return nil }

// check says why an entry's identifier is not a bundle's URL, or its
// fileSha256 not a SHA-256 (the version is optional: the URL and the
// hash name the bundle).
func (*mcpbRunner) check(p *Package) string {
	if why := checkBundleURL(p.Identifier); why != "" {
		return why
	}
	if p.FileSHA256 != "" && !sha256HexRE.MatchString(p.FileSHA256) {
		return "fileSha256 is not 64 hex digits"
	}
	return ""
}

// prepare finds the runtimes a bundle's server may need: node, python3.
// One missing is said by the bundles that need it.
func (*mcpbRunner) prepare(ctx context.Context, s *Set) error {
	if node, err := exec.LookPath("node"); err == nil {
		_ = s.findNode(node) // unresolved: node bundles say node is missing
	}
	s.findPython(ctx)
	return nil
}

// run fetches the bundle (once, into the cache), checks its
// fileSha256, unpacks it and runs its manifest's server.
func (*mcpbRunner) run(ctx context.Context, pr *Set, pkg *Package) probe.Result {
	key := "mcpb-" + hexHash(pkg.Identifier+" "+pkg.FileSHA256)
	var sum string
	in, err := pr.cache.acquireDir(ctx, key, func(ctx context.Context, tmp string) (string, error) {
		s, err := pr.fetchBundle(ctx, pkg, tmp)
		sum = s
		return "bundle", err
	})
	if err != nil {
		return acquireError(ctx, err)
	}
	defer pr.cache.release(in.key)
	if sum == "" {
		b, _ := os.ReadFile(filepath.Join(in.dir, "sha256"))
		sum = string(b)
	}
	dir := filepath.Join(in.dir, in.main)
	b, err := readInRoot(dir, "manifest.json", maxManifest)
	if err != nil {
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindInstall, Error: "the bundle's manifest.json: " + err.Error()}
	}
	var m bundleManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindInstall, Error: "manifest.json: " + err.Error()}
	}
	argv, env, mounts, why := pr.bundleCommand(&m)
	info := &probe.RunnerInfo{Runner: RegistryMCPB, Argv: argv, Resolved: "sha256:" + sum, UncheckedDigest: pkg.FileSHA256 == ""}
	if why != "" {
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindNoRuntime, Error: why, Runner: info}
	}
	env = imageEnv(env, packageEnv(pkg))
	spec := sandbox.Spec{Args: append(argv, packageArgs(pkg)...), Env: env, Dir: bundleMount, Limits: pr.limits,
		Mounts: append([]sandbox.Mount{{Host: dir, Sandbox: bundleMount}}, mounts...)}
	return pr.runServer(ctx, in, spec, info, pkg)
}

func hexHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:12])
}

var bundleVar = regexp.MustCompile(`\$\{([^}]*)\}`)

// bundleCommand is the manifest's server as a command in the sandbox:
// mcp_config's command, args and env with ${__dirname} the bundle and
// ${user_config.X} its default, or else the server type's runtime on the
// entry point. A command with no runtime here says why.
func (pr *Set) bundleCommand(m *bundleManifest) (argv, env []string, mounts []sandbox.Mount, why string) {
	subst := func(s string) string {
		return bundleVar.ReplaceAllStringFunc(s, func(v string) string {
			name := v[2 : len(v)-1]
			if name == "__dirname" {
				return bundleMount
			}
			if k, ok := strings.CutPrefix(name, "user_config."); ok {
				if d, ok := m.UserConfig[k]; ok && d.Default != nil {
					return fmt.Sprint(d.Default)
				}
			}
			return ""
		})
	}
	var command string
	var args []string
	if c := m.Server.MCPConfig; c != nil && c.Command != "" {
		command = subst(c.Command)
		for _, a := range c.Args {
			args = append(args, subst(a))
		}
		for k, v := range c.Env {
			env = append(env, k+"="+subst(v))
		}
	} else {
		entry := path.Join(bundleMount, path.Clean("/"+m.Server.EntryPoint))
		switch m.Server.Type {
		case "node":
			command, args = "node", []string{entry}
		case "python":
			command, args = "python3", []string{entry}
		case "binary":
			command = entry
		default:
			return nil, nil, nil, fmt.Sprintf("the bundle's server type %q has no runner here", m.Server.Type)
		}
	}
	switch {
	case command == "node":
		if pr.node == "" {
			return []string{command}, nil, nil, "a node bundle needs node, and this machine lacks it"
		}
		argv, mounts = append([]string{pr.node}, args...), pr.nodeMount
	case command == "python" || command == "python3":
		if pr.python == nil || pr.python.python == "" {
			return []string{command}, nil, nil, "a python bundle needs a python3 the sandbox can run"
		}
		argv, mounts = append([]string{pr.python.python}, args...), pr.python.mounts
		// A bundle carries its dependencies in server/lib, by convention.
		env = append(env, "PYTHONPATH="+bundleMount+"/server/lib", "PYTHONDONTWRITEBYTECODE=1")
	case strings.HasPrefix(path.Clean(command), bundleMount+"/"):
		// Cleaned first: "/bundle/../usr/bin/env" is not the bundle's.
		argv = append([]string{path.Clean(command)}, args...)
	default:
		return []string{command}, nil, nil, fmt.Sprintf("the bundle runs %q, which has no runner here", command)
	}
	return argv, env, mounts, ""
}

// fetchBundle downloads the bundle into tmp, checks it against the
// entry's fileSha256 (a mismatch is never unpacked) and unpacks it into
// tmp/bundle. It returns the bundle's SHA-256.
func (pr *Set) fetchBundle(ctx context.Context, pkg *Package, tmp string) (string, error) {
	u, err := url.Parse(pkg.Identifier)
	if err != nil {
		return "", &installError{err: err}
	}
	allow := pr.p.Options().AllowAddr
	switch u.Scheme {
	case "https":
	case "http":
		ip, perr := netip.ParseAddr(strings.Trim(u.Hostname(), "[]"))
		loopback := u.Hostname() == "localhost" || (perr == nil && ip.IsLoopback())
		if !loopback || allow == nil || !allow(netip.MustParseAddr("127.0.0.1")) {
			return "", &installError{err: fmt.Errorf("%s: %w", pkg.Identifier, errPlainBundle)}
		}
	default:
		return "", &installError{err: fmt.Errorf("%s: a bundle is fetched over HTTPS, not %q", pkg.Identifier, u.Scheme)}
	}
	client := &http.Client{Transport: pr.p.Transport(), CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
			return fmt.Errorf("redirect to %s: a bundle follows redirects on its own host only", req.URL.Redacted())
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pkg.Identifier, nil)
	if err != nil {
		return "", &installError{err: err}
	}
	req.Header.Set("User-Agent", pr.p.Options().UserAgent)
	resp, err := client.Do(req)
	if err != nil {
		return "", &installError{err: fmt.Errorf("fetching the bundle: %w", err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", &installError{err: fmt.Errorf("fetching the bundle: %s", resp.Status)}
	}
	if resp.ContentLength > pr.cache.maxPackage {
		return "", &installError{err: fmt.Errorf("the bundle is %d bytes, over the package bound of %d", resp.ContentLength, pr.cache.maxPackage)}
	}
	file := filepath.Join(tmp, "bundle.mcpb")
	f, err := os.Create(file)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, pr.cache.maxPackage+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", &installError{err: fmt.Errorf("fetching the bundle: %w", err)}
	}
	if n > pr.cache.maxPackage {
		return "", &installError{err: fmt.Errorf("the bundle is over the package bound of %d bytes", pr.cache.maxPackage)}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if pkg.FileSHA256 != "" && sum != pkg.FileSHA256 {
		return "", &installError{err: fmt.Errorf("fileSha256 mismatch: the entry says %s, the bundle is %s; not run", pkg.FileSHA256, sum)}
	}
	if err := unpackBundle(file, filepath.Join(tmp, "bundle"), pr.cache.maxPackage); err != nil {
		return "", &installError{err: err}
	}
	if err := os.Remove(file); err != nil {
		return "", err
	}
	return sum, os.WriteFile(filepath.Join(tmp, "sha256"), []byte(sum), 0o644)
}

// unpackBundle unzips file into dir, which no entry can leave: a name with
// "..", an absolute name or a link out of the folder is refused, only
// files, folders and links inside are made, and the bytes written stop at
// max whatever the entries claim.
func unpackBundle(file, dir string, max int64) error {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return fmt.Errorf("the bundle is not a zip archive: %w", err)
	}
	defer zr.Close()
	if len(zr.File) > maxBundleFiles {
		return fmt.Errorf("the bundle has %d entries, more than %d", len(zr.File), maxBundleFiles)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	left := max
	var links []string
	for _, zf := range zr.File {
		name := strings.ReplaceAll(zf.Name, "\\", "/")
		if path.IsAbs(name) || slices.Contains(strings.Split(name, "/"), "..") {
			return fmt.Errorf("bundle entry %q escapes the bundle", zf.Name)
		}
		name = path.Clean(name)
		if name == "." {
			continue
		}
		if d := path.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("bundle entry %q: %w", zf.Name, err)
			}
		}
		mode := zf.Mode()
		switch {
		case mode.IsDir():
			if err := root.MkdirAll(name, 0o755); err != nil {
				return fmt.Errorf("bundle entry %q: %w", zf.Name, err)
			}
		case mode&os.ModeSymlink != 0:
			rc, err := zf.Open()
			if err != nil {
				return err
			}
			target, err := io.ReadAll(io.LimitReader(rc, 4096))
			rc.Close()
			if err != nil {
				return err
			}
			t := string(target)
			if path.IsAbs(t) || strings.HasPrefix(path.Clean(path.Join(path.Dir(name), t)), "../") || path.Clean(path.Join(path.Dir(name), t)) == ".." {
				return fmt.Errorf("bundle entry %q links out of the bundle (%q)", zf.Name, t)
			}
			if err := root.Symlink(t, name); err != nil {
				return fmt.Errorf("bundle entry %q: %w", zf.Name, err)
			}
			links = append(links, name)
		case mode.IsRegular():
			perm := os.FileMode(0o644)
			if mode&0o111 != 0 {
				perm = 0o755
			}
			w, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return fmt.Errorf("bundle entry %q: %w", zf.Name, err)
			}
			rc, err := zf.Open()
			if err != nil {
				w.Close()
				return err
			}
			n, err := io.Copy(w, io.LimitReader(rc, left+1))
			rc.Close()
			left -= n
			if err == nil {
				err = w.Chmod(perm)
			}
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("bundle entry %q: %w", zf.Name, err)
			}
			if left < 0 {
				return fmt.Errorf("the bundle unpacks to more than %d bytes", max)
			}
		default:
			// Devices and the like are never made.
		}
	}
	return checkLinks(root, links)
}

// maxManifest bounds the manifest read into memory.
const maxManifest = 1 << 20

// checkLinks refuses a bundle any of whose links resolves outside it. Each
// link's text stays inside on paper (unpackBundle checks that), but a
// chain can still climb out: a link "l -> ../" deep in the tree makes a
// later "d1/.../l/../../x" leave the folder. The root resolves every link
// the way the kernel will, and says when one escapes.
func checkLinks(root *os.Root, links []string) error {
	for _, name := range links {
		if _, err := root.Stat(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("bundle entry %q links out of the bundle: %w", name, err)
		}
	}
	return nil
}

// readInRoot reads name inside dir through an os.Root: no link in the
// folder can make the read leave it, whatever the links say. At most max
// bytes are read.
func readInRoot(dir, name string, max int64) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return b, nil
}
