package runners

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ociroot"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// imageFile, beside an image's root filesystem in its cache folder, holds
// what the image says of how to run it.
const imageFile = "image.json"

// rootfsDir is the root filesystem's folder in an image's cache folder.
const rootfsDir = "rootfs"

// ociRunner pulls OCI images by digest, flattens them into a root
// filesystem in the cache, and runs their entrypoint on it.
type ociRunner struct {
	opt ociroot.Options
}

func (*ociRunner) pinned() bool          { return true }
func (*ociRunner) find() string          { return "" }
func (*ociRunner) proxy() *sandbox.Proxy { return nil }

// check completes an image's reference with the tag an entry gives as its
// version (the registry requires the tag in the identifier and refuses a
// version; entries of older schemas give it as the version), and says why
// it is not a reference with a tag or digest.
func (*ociRunner) check(p *Package) string {
	if p.Version != "" && !hasTagOrDigest(p.Identifier) {
		p.Identifier += ":" + p.Version
	}
	return checkImageRef(p.Identifier)
}

// prepare sets the pulls' options: through the crawl's transport (its
// address policy), plain HTTP only to a loopback registry and only when
// the crawl allows private addresses, one image bounded as one package.
func (r *ociRunner) prepare(_ context.Context, s *Set) error {
	popt := s.p.Options()
	allow := popt.AllowAddr
	r.opt = ociroot.Options{Transport: s.p.Transport(), PlainHTTP: allow != nil && allow(netip.MustParseAddr("127.0.0.1")),
		MaxBytes: s.cache.maxPackage, UserAgent: popt.UserAgent, Platform: ociroot.HostPlatform()}
	return nil
}

// run pulls the image by digest into the cache (once), and runs its
// entrypoint with the entry's package arguments, or its command when the
// entry gives none (as docker run IMAGE ARGS does), with the image's
// environment and the entry's defaults over it, in its working folder,
// with its root filesystem read-only as / and as the sandbox's
// unprivileged user whatever user the image names.
func (r *ociRunner) run(ctx context.Context, pr *Set, pkg *Package) probe.Result {
	// The crawl's transport has no timeouts of its own (a probe's
	// deadline bounds a remote's): resolving gets the install's, as the
	// pull in acquireDir does, so a registry that never answers holds
	// the worker no longer.
	rctx, cancel := context.WithTimeout(ctx, pr.cache.timeout)
	im, err := ociroot.Resolve(rctx, pkg.Identifier, r.opt)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("resolving the image did not finish within %v: %w", pr.cache.timeout, err)
		}
		return acquireError(ctx, &installError{err: err})
	}
	h := sha256.Sum256([]byte(im.Digest + " " + r.opt.Platform.String()))
	key := "oci-" + hex.EncodeToString(h[:12])
	in, err := pr.cache.acquireDir(ctx, key, func(ctx context.Context, tmp string) (string, error) {
		f, err := im.Flatten(ctx, filepath.Join(tmp, rootfsDir), sandbox.MountPoints)
		if err != nil {
			return "", &installError{err: err}
		}
		b, _ := json.Marshal(f)
		return rootfsDir, os.WriteFile(filepath.Join(tmp, imageFile), b, 0o644)
	})
	if err != nil {
		return acquireError(ctx, err)
	}
	defer pr.cache.release(in.key)
	var f ociroot.Flattened
	if b, err := os.ReadFile(filepath.Join(in.dir, imageFile)); err != nil || json.Unmarshal(b, &f) != nil {
		return acquireError(ctx, fmt.Errorf("%s: unreadable %s", in.dir, imageFile))
	}
	argv := imageArgv(f.Config, packageArgs(pkg))
	info := &probe.RunnerInfo{Runner: RegistryOCI, Argv: argv, Resolved: f.Digest}
	if len(argv) == 0 {
		return probe.Result{Transport: probe.TransportStdio, ErrorKind: probe.KindInstall, Error: "the image names no entrypoint or command", Runner: info}
	}
	dir := path.Clean("/" + f.Config.WorkingDir)
	spec := sandbox.Spec{Args: argv, Env: imageEnv(f.Config.Env, packageEnv(pkg)), RootFS: filepath.Join(in.dir, in.main),
		Dir: dir, Limits: pr.limits}
	return pr.runServer(ctx, in, spec, info, pkg)
}

// imageArgv is what docker run IMAGE ARGS runs: the entrypoint, then the
// arguments when given, the image's command otherwise.
func imageArgv(c ociroot.Config, args []string) []string {
	out := append([]string(nil), c.Entrypoint...)
	if len(args) > 0 {
		return append(out, args...)
	}
	return append(out, c.Cmd...)
}

// imageEnv is the image's environment with the entry's variables over it;
// a variable whose name the sandbox would refuse is left out.
func imageEnv(image, entry []string) []string {
	var out []string
	idx := map[string]int{}
	for _, kv := range append(append([]string(nil), image...), entry...) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !envVarName(k) {
			continue
		}
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

func envVarName(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
