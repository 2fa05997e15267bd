package crawl

import (
	"context"
	"encoding/json"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
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
func packageTargets(ts []target, todo []int) []*runners.Package {
	var out []*runners.Package
	for _, i := range todo {
		out = append(out, ts[i].pkg)
	}
	return out
}

// probePackages runs the packaged servers of todo on a pool of
// opt.Packages.Concurrency workers (each install and run a sandbox of its own) and
// journals each result as it arrives, as probeAll does for remotes. A
// probe cut short by ctx is not journalled.
func probePackages(ctx context.Context, opt Options, pr *runners.Set, ts []target, todo []int, j *journal, sum *Summary, b *tally) error {
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
				r := pr.Probe(wctx, slot, t.pkg)
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
func preparePackages(ctx context.Context, opt *Options, ts []target, todo []int) (*runners.Set, error) {
	if len(todo) == 0 {
		return nil, nil
	}
	p := probe.NewProber(opt.Probe)
	opt.Packages.Conditions = recordConditions(opt)
	pr, err := runners.New(ctx, p, &opt.Packages, packageTargets(ts, todo))
	if err != nil {
		p.Close()
		return nil, err
	}
	return pr, nil
}

// recordConditions are the crawl's options that can change a record, as
// merge holds shards to them (recordOptions): a record is reused only
// under the same (see runners.Options.ReuseRecords).
func recordConditions(opt *Options) string {
	b, _ := json.Marshal(recordOptions(opt.releaseOptions()))
	return string(b)
}
