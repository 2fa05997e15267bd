package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/atlas-reproduce/atlas-reproduce/fetch"
)

// reproduceOptions is what reproduce's flags say.
type reproduceOptions struct {
	fetch fetchFlags // the records and where they go (--dest)
	out   string     // the run's output folder
	run   runFlags
}

var runReproduce = parsed(parseReproduce, reproduce)

// parseReproduce parses reproduce's command line.
func parseReproduce(env *cmdEnv, args []string) (reproduceOptions, error) {
	fs := newFlagSet(env, "reproduce", synopsis("reproduce"))
	var o reproduceOptions
	o.fetch.register(fs, "download into `DIR` (required; files already there and verified are not fetched again)")
	fs.StringVar(&o.out, "out", "", "output `DIR` (required)")
	o.run.register(fs)
	return o, parseFlagsOnly(fs, args)
}

// reproduce downloads the records o names, runs the census over them and
// judges the run: against the pinned snapshot, or a deposit's own table.
func reproduce(ctx context.Context, env *cmdEnv, o reproduceOptions) error {
	rep := newFetchReporter(env, o.run.progress)
	fo, err := o.fetch.options(rep, env.logger(slog.LevelInfo))
	if err != nil {
		return err
	}
	if o.out == "" {
		return usageError{"--out is required"}
	}
	opt, err := o.run.options(env, o.fetch.dest, o.out)
	if err != nil {
		return err
	}
	_, err = fetch.Download(ctx, fo)
	rep.close()
	if err != nil {
		if ctx.Err() == nil {
			// Offline, or Zenodo down: the files may be here already.
			fmt.Fprintf(env.stderr, "atlas-reproduce reproduce: to run offline on files already downloaded, run: atlas-reproduce run --data %s --out %s --require-reproduced (every SHA-256 is still checked against the pinned hashes)\n", o.fetch.dest, o.out)
		}
		return err
	}
	// A deposit made by publish is verified against its own SHA256SUMS
	// and held to its own published table, not the spec's.
	dep, err := depositInputs(o.fetch.dest, &opt, &o.run, false)
	if err != nil {
		return err
	}
	r, err := runPipeline(ctx, env, opt)
	if err != nil {
		return err
	}
	if err := copyFile(env.stdout, filepath.Join(o.out, "report.md")); err != nil {
		return err
	}
	if dep != nil {
		return dep.finish(env.stdout, o.out)
	}
	// Like sha256sum -c: a reproduction that did not reproduce fails.
	if err := r.Earned(); err != nil {
		return verdictError{err.Error()}
	}
	return nil
}
