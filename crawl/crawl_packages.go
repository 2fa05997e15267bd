package crawl

import (
	"context"

	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
	"golang.org/x/sync/errgroup"
)

func hasPackages(ts []target) bool {
	for _, t := range ts {
		if t.pkg != nil {
			return true
		}
	}
	return false
}

// packageTargets are the packages among the targets of todo.
func packageTargets(ts []target, todo []int) []*Package {
	var out []*Package
	for _, i := range todo {
		out = append(out, ts[i].pkg)
	}
	return out
}

// probePackages runs the packaged servers of todo on a pool of
// opt.Packages.Concurrency workers (each install and run a sandbox of its own) and
// journals each result as it arrives, as probeAll does for remotes. A
// probe cut short by ctx is not journalled.
func probePackages(ctx context.Context, opt Options, pr *packageRunner, ts []target, todo []int, j *journal, sum *Summary, b *tally) error {
	if len(todo) == 0 {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	gctx, stopProbes := context.WithCancelCause(gctx)
	defer stopProbes(nil)
	work := make(chan int)
	results := make(chan probed, opt.Packages.Concurrency)
	g.Go(func() error {
		defer close(work)
		for _, i := range todo {
			select {
			case work <- i:
			case <-gctx.Done():
				return nil
			}
		}
		return nil
	})
	workers, wctx := errgroup.WithContext(gctx)
	for slot := range opt.Packages.Concurrency {
		workers.Go(func() error {
			for i := range work {
				t := &ts[i]
				r := pr.probe(wctx, slot, t.pkg)
				if !sendProbed(wctx, results, t, &r) {
					return nil
				}
			}
			return nil
		})
	}
	go func() { _ = workers.Wait(); close(results) }()
	g.Go(func() error { return journalProbed(results, j, sum, b, stopProbes) })
	err := g.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// preparePackages makes the runner of the packages of todo, with a prober
// of its own; it fails when a runnable package has no sandbox.
func preparePackages(ctx context.Context, opt *Options, ts []target, todo []int) (*packageRunner, error) {
	if len(todo) == 0 {
		return nil, nil
	}
	p := NewProber(opt.Probe)
	pr, err := newPackageRunner(ctx, p, &opt.Packages, packageTargets(ts, todo))
	if err != nil {
		p.Close()
		return nil, err
	}
	return pr, nil
}

// close releases the runner's prober; a nil runner has none.
func (pr *packageRunner) close() {
	if pr != nil {
		pr.p.Close()
		pr.closeProxies()
	}
}

// traffic is what the install steps fetched from their registries, and
// through how many connections.
func (pr *packageRunner) traffic() (bytes, conns int64) {
	if pr == nil {
		return 0, 0
	}
	for _, p := range pr.proxies() {
		b, c := p.Traffic()
		bytes, conns = bytes+b, conns+c
	}
	return bytes, conns
}

// tarballs is how many npm tarballs the installs fetched.
func (pr *packageRunner) tarballs() int64 {
	if pr == nil || pr.cache == nil {
		return 0
	}
	return pr.cache.tarballs.Load()
}

// proxies are the install steps' proxies the runner started.
func (pr *packageRunner) proxies() []*sandbox.Proxy {
	var out []*sandbox.Proxy
	if pr.proxy != nil {
		out = append(out, pr.proxy)
	}
	if pr.pypi != nil && pr.pypi.proxy != nil {
		out = append(out, pr.pypi.proxy)
	}
	return out
}

// closeProxies stops the install steps' proxies.
func (pr *packageRunner) closeProxies() {
	if pr.cache != nil && pr.cache.client != nil {
		pr.cache.client.CloseIdleConnections()
	}
	for _, p := range pr.proxies() {
		p.Close()
	}
}

// ScanPackage installs and runs the one packaged server coord names
// (npm:NAME@VERSION) in the sandbox, as a crawl would: the client of the
// crawl, for the scan command. Only a coordinate that cannot be run, or a
// machine without a sandbox, is an error.
func ScanPackage(ctx context.Context, coord string, opt ProbeOptions, popt PackageOptions) (string, Result, error) {
	return ScanPackageWith(ctx, coord, nil, nil, opt, popt)
}
