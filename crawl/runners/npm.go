package runners

import (
	"context"
	"errors"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// npmRunner installs npm packages with the machine's npm, from the
// registry npm is configured with, through a proxy to that registry
// alone, and runs their entry point with the machine's node.
type npmRunner struct {
	npm, node string // the programs found on PATH
	prx       *sandbox.Proxy
	// installCond is the hash of the conditions of every install of the
	// crawl (Set.installConditions), the same for each package.
	installCond string
}

// pkgMount is where the installed package is seen in the sandbox.
const pkgMount = "/pkg"

func (*npmRunner) pinned() bool            { return false }
func (*npmRunner) check(*Package) string   { return "" }
func (r *npmRunner) proxy() *sandbox.Proxy { return r.prx }

func (r *npmRunner) find() string {
	npm, nerr := exec.LookPath("npm")
	node, derr := exec.LookPath("node")
	if nerr != nil || derr != nil {
		return "npm and node are needed to run npm packages, and this machine lacks one"
	}
	r.npm, r.node = npm, node
	return ""
}

// prepare readies the npm runner: node and npm's folders shown in the
// sandbox, and the proxy to the registry npm is configured with.
func (r *npmRunner) prepare(ctx context.Context, s *Set) error {
	if err := s.findNode(r.node); err != nil {
		return err
	}
	cli, err := filepath.EvalSymlinks(r.npm)
	if err != nil {
		return err
	}
	mounts := s.nodeMount
	if i := strings.LastIndex(cli, "/node_modules/npm/"); i >= 0 && !strings.HasPrefix(cli, "/usr/") {
		root := cli[:i+len("/node_modules/npm")]
		mounts = append(mounts, sandbox.Mount{Host: root, Sandbox: root})
	}
	conf, err := readNPMConfig(ctx, r.npm)
	if err != nil {
		return err
	}
	if err := conf.checkRegistryTLS(ctx); err != nil {
		return err
	}
	via, err := conf.upstream()
	if err != nil {
		return err
	}
	proxy, err := sandbox.NewProxyVia(via, conf.Registry)
	if err != nil {
		return err
	}
	r.prx = proxy
	c := s.cache
	c.node, c.npmCLI, c.mounts, c.hide, c.registry, c.proxy, c.conf = s.node, cli, mounts, gitPaths(), conf.Registry, proxy, conf
	r.installCond = s.installConditions()
	return nil
}

// run installs an npm package with npm and runs its entry point with the
// machine's node.
func (r *npmRunner) run(ctx context.Context, s *Set, pkg *Package) probe.Result {
	key, cond := s.cache.key(pkg), r.installCond
	if s.reuse {
		if kept, ok := s.cache.keptFailure(key, cond); ok {
			s.reused.Add(1)
			return kept
		}
	}
	in, err := s.cache.acquire(ctx, pkg)
	if err != nil {
		failed := acquireError(ctx, err)
		if ie := (*installError)(nil); errors.As(err, &ie) && ie.settled && ctx.Err() == nil {
			s.cache.keepFailure(key, cond, failed)
		}
		return failed
	}
	defer s.cache.release(in.key)
	args := append([]string{s.node, path.Join(pkgMount, in.main)}, packageArgs(pkg)...)
	spec := sandbox.Spec{Args: args, Env: packageEnv(pkg), Limits: s.limits,
		Mounts: append([]sandbox.Mount{{Host: in.dir, Sandbox: pkgMount}}, s.nodeMount...)}
	return s.runServer(ctx, in, spec, &probe.RunnerInfo{Runner: RegistryNPM, Argv: args, Resolved: pkg.Identifier + "@" + pkg.Version}, pkg)
}
