package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline/linepool"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// runFlags are the flags run and reproduce share.
type runFlags struct {
	sums      string
	noVerify  bool
	workers   int
	skipBad   bool
	progress  bool
	maxLine   int
	noSens    bool
	truth     string
	baseline  string
	eval      string
	memRoom   memoryRoom
	hugePages bool
	fitQuota  bool
}

// memoryRoom is run's --memory-limit: the working room of its soft
// memory limit, and whether the flag was given.
type memoryRoom struct {
	bytes int64
	given bool
}

func (m *memoryRoom) String() string { return strconv.FormatInt(m.bytes, 10) }

func (m *memoryRoom) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("want a number of bytes, 0 or more")
	}
	m.bytes, m.given = v, true
	return nil
}

// room is the pipeline's MemoryRoom: the flag's value, or when it is not
// given the default unless GOMEMLIMIT is set (it then stands).
func (m *memoryRoom) room() int64 {
	if !m.given && os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	return m.bytes
}

func (f *runFlags) register(fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
	IntVar(*int, string, int, string)
	Var(flag.Value, string, string)
}) {
	fs.StringVar(&f.sums, "sha256sums", "", "sha256sum-format `FILE` with the expected hashes (default: the hashes pinned in the spec)")
	fs.BoolVar(&f.noVerify, "no-verify", false, "do not check hashes; the report then says UNVERIFIED")
	fs.IntVar(&f.workers, "workers", 0, "decode-and-classify workers (default GOMAXPROCS)")
	fs.BoolVar(&f.skipBad, "skip-bad", false, "count and skip bad lines instead of failing (the verdict cannot then be REPRODUCED)")
	fs.BoolVar(&f.progress, "progress", true, "draw progress bars when stderr is a terminal")
	fs.BoolVar(&f.noSens, "no-sensitivity", false, "skip the non-normative sensitivity figures (to measure their cost; normative figures are the same either way)")
	fs.IntVar(&f.maxLine, "max-line", linepool.DefaultMaxLine, "refuse a line longer than `BYTES` (the run fails, naming it)")
	fs.StringVar(&f.truth, "truth", "", "hold the counts to a synthetic census's ground truth `FILE` (default: truth.json in the data folder, when there is one)")
	f.memRoom.bytes = pipeline.DefaultMemoryRoom
	fs.Var(&f.memRoom, "memory-limit", "working room in `bytes` of the run's soft memory limit, which is this plus what the run's lasting tallies hold, raised as they grow (0: no limit; GOMEMLIMIT, when set, stands unless this flag is given)")
	fs.BoolVar(&f.hugePages, "huge-pages", true, "where the kernel gives transparent huge pages only when asked (mode madvise), ask for them for the run's heap: fewer page faults and TLB misses, less CPU (false: leave the heap to the kernel's default)")
	fs.BoolVar(&f.fitQuota, "fit-cpu-quota", true, "under a CPU quota of one CPU or less (a container's, a CI job's), run on one core where Go's default is two: the second costs CPU and wins no time (false: Go's default; GOMAXPROCS, when set, stands either way)")
	fs.StringVar(&f.eval, "evaluation", "", "add \"How good are these labels\" to the report from evaluate's evaluation.json `FILE`")
	fs.StringVar(&f.baseline, "baseline", "", "set a release beside the previous run in `DIR` (its report.json and tools.parquet), class by class and tool by tool")
}

func (f *runFlags) options(env *cmdEnv, data, out string) (pipeline.Options, error) {
	opt := pipeline.Options{Data: data, Out: out, NoVerify: f.noVerify, Workers: f.workers, SkipBad: f.skipBad, MaxLine: f.maxLine, NoSensitivity: f.noSens,
		TruthFile: f.truth, Baseline: f.baseline, Logger: env.logger(slog.LevelInfo), MemoryRoom: f.memRoom.room(), HugePages: f.hugePages, FitCPUQuota: f.fitQuota}
	if f.sums != "" {
		if f.noVerify {
			return opt, usageError{"--sha256sums and --no-verify contradict each other"}
		}
		m, err := hashverify.ReadSHA256Sums(f.sums)
		if err != nil {
			return opt, err
		}
		opt.Manifest, opt.ManifestName = m, filepath.Base(f.sums)
	}
	if f.eval != "" {
		ev, err := readEvaluation(f.eval)
		if err != nil {
			return opt, err
		}
		opt.Evaluation = ev
	}
	if f.workers < 0 {
		return opt, usageError{"--workers must be positive"}
	}
	if f.maxLine <= 0 {
		return opt, usageError{"--max-line must be positive"}
	}
	opt.Progress = env.console().fileProgress(env.drawBars(f.progress))
	return opt, nil
}

// runOptions is what run's flags say.
type runOptions struct {
	data, out         string
	flags             runFlags
	releaseID         string // --release-id
	releaseDate       string // --release-date
	requireReproduced bool   // fail unless the run earns its verdict
}

var runRun = parsed(parseRun, runCensusRun)

// parseRun parses run's command line.
func parseRun(env *cmdEnv, args []string) (runOptions, error) {
	fs := newFlagSet(env, "run", synopsis("run"))
	var o runOptions
	fs.StringVar(&o.data, "data", "", "`PATH`: a folder with the census files or the Zenodo zips, or a zip")
	fs.StringVar(&o.out, "out", "", "output `DIR` (created if needed)")
	o.flags.register(fs)
	fs.StringVar(&o.releaseID, "release-id", "", "name the census release `ID` (letters, digits, '.', '_', '-'; default: its date) in report.json and each table's metadata, as history files it")
	fs.StringVar(&o.releaseDate, "release-date", "", "the `YYYY-MM-DD` the census was taken, when its inputs do not say (a crawl release's release.json and the pinned snapshot do)")
	fs.BoolVar(&o.requireReproduced, "require-reproduced", false, "exit 1 unless the run earns its verdict: REPRODUCED (a synthetic census: MATCHES TRUTH); a release, which has none, fails too")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if o.data == "" || o.out == "" || fs.NArg() > 0 {
		return o, usageError{"run needs --data PATH and --out DIR, and no other arguments"}
	}
	return o, nil
}

// runCensusRun runs the census o names and judges it where its inputs
// call for a verdict.
func runCensusRun(ctx context.Context, env *cmdEnv, o runOptions) error {
	opt, err := o.flags.options(env, o.data, o.out)
	if err != nil {
		return err
	}
	dep, err := depositInputs(o.data, &opt, &o.flags, true)
	if err != nil {
		return err
	}
	if o.releaseID != "" {
		if err := report.CheckReleaseID(o.releaseID); err != nil {
			return usageError{"--release-id: " + err.Error()}
		}
	}
	if o.releaseDate != "" {
		if err := report.CheckReleaseDate(o.releaseDate); err != nil {
			return usageError{"--release-date: " + err.Error()}
		}
	}
	opt.ReleaseID, opt.ReleaseDate = o.releaseID, o.releaseDate
	r, err := runPipeline(ctx, env, opt)
	if err != nil {
		return err
	}
	if dep != nil {
		// A run over a deposit judges it whether or not
		// --require-reproduced was given: its verdict is printed and
		// sets the exit status (docs/exit-codes.md).
		return dep.finish(env.stdout, o.out)
	}
	if !r.Verified {
		fmt.Fprintln(env.stderr, "atlas-reproduce run: UNVERIFIED: hashes were not checked (--no-verify)")
	}
	if o.requireReproduced {
		if err := r.Earned(); err != nil {
			return verdictError{"--require-reproduced: " + err.Error()}
		}
	}
	return nil
}

// runPipeline runs the census and takes its progress bar off the screen.
func runPipeline(ctx context.Context, env *cmdEnv, opt pipeline.Options) (*report.Report, error) {
	r, err := pipeline.Run(ctx, opt)
	env.console().end(false)
	return r, err
}
