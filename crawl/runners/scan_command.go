package runners

import (
	"context"
	"fmt"
	"slices"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// ScanCommand runs one stdio server that is no package, a command a
// developer's agent config names (node ./server.js, a binary in the
// repository), in the sandbox sb, and lists its tools as Probe would: the
// client of the crawl, for `scan --config`. spec says what the sandbox
// shows; it never has the network, whatever spec says. The result says
// how the server answered or why it did not; a failure to start the
// sandbox is a result of kind exited, as for a packaged server.
func ScanCommand(ctx context.Context, sb *sandbox.Sandbox, spec sandbox.Spec, opt probe.Options) probe.Result {
	p := probe.NewProber(opt)
	defer p.Close()
	spec.Network = false
	return p.Command(ctx, sandboxed(sb, spec))
}

// ScanPackageWith is ScanPackage with what a client's config gives the
// server: args follow the package's own entry point, as npx PKG ARGS, uvx
// PKG ARGS and docker run IMAGE ARGS pass them, and env reaches the server
// alone, inside the sandbox, as an entry's environment defaults do.
func ScanPackageWith(ctx context.Context, coord string, args []string, env map[string]string, opt probe.Options, popt Options) (string, probe.Result, error) {
	pkg, err := ParsePackageID(coord)
	if err != nil {
		return "", probe.Result{}, err
	}
	for _, a := range args {
		pkg.PackageArguments = append(pkg.PackageArguments, Argument{Type: "positional", Value: a})
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v := env[k]
		pkg.Env = append(pkg.Env, EnvVar{Name: k, Default: &v})
	}
	p := probe.NewProber(opt)
	pr, err := New(ctx, p, &popt, []*Package{pkg})
	if err != nil {
		p.Close()
		return "", probe.Result{}, err
	}
	defer pr.Close()
	if why := pr.unavailable(pkg); why != "" {
		return "", probe.Result{}, fmt.Errorf("%s: %s", coord, why)
	}
	return pkg.ID(), pr.Probe(ctx, 0, pkg), nil
}

// ScanPackage installs and runs the one packaged server coord names
// (npm:NAME@VERSION) in the sandbox, as a crawl would: the client of the
// crawl, for the scan command. Only a coordinate that cannot be run, or a
// machine without a sandbox, is an error.
func ScanPackage(ctx context.Context, coord string, opt probe.Options, popt Options) (string, probe.Result, error) {
	return ScanPackageWith(ctx, coord, nil, nil, opt, popt)
}
