package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"

	"github.com/atlas-reproduce/atlas-reproduce/bench"
	"github.com/atlas-reproduce/atlas-reproduce/internal/cpuquota"
)

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range commaItems(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchOptions is what bench's flags say: bench.Options without the
// binary, work folder and logger, which the run supplies.
type benchOptions struct {
	opt bench.Options
	// binary is the atlas-reproduce to time; "" for this executable.
	binary string
}

var runBench = parsed(parseBench, benchRun)

// parseBench parses bench's command line.
func parseBench(env *cmdEnv, args []string) (benchOptions, error) {
	fs := newFlagSet(env, "bench", synopsis("bench"))
	var data []string
	fs.Func("data", "census folder to time; repeat it for one table of several (default: synthesise one per scale)", func(s string) error {
		if s == "" {
			return errors.New("empty path")
		}
		data = append(data, s)
		return nil
	})
	tools := fs.Int("tools", 229539, "tools in the 1× synthetic census")
	scales := fs.String("scales", "1,4,10", "comma-separated multiples of --tools to time")
	pyScales := fs.String("python-scales", "1", "scales at which to time the Python reference (empty: none)")
	maxServerTools := fs.Int("max-server-tools", 39000, "also time, at each scale, a census with a heavy tail whose largest server has `N`×scale tools (0: none)")
	runs := fs.Int("runs", 3, "runs per timing; the median is reported")
	workers := fs.Int("workers", 0, "workers for the pipeline (default GOMAXPROCS)")
	if err := parseFlags(fs, args); err != nil {
		return benchOptions{}, err
	}
	sc, err := parseInts(*scales)
	if err != nil {
		return benchOptions{}, usageError{"--scales: " + err.Error()}
	}
	ps, err := parseInts(*pyScales)
	if err != nil {
		return benchOptions{}, usageError{"--python-scales: " + err.Error()}
	}
	if *maxServerTools < 0 {
		return benchOptions{}, usageError{"--max-server-tools must not be negative"}
	}
	if fs.NArg() > 0 || *runs <= 0 || *tools <= 0 || len(sc) == 0 {
		return benchOptions{}, usageError{"bench takes positive --runs, --tools and --scales, and no arguments"}
	}
	return benchOptions{opt: bench.Options{
		Data: data, Tools: *tools, Scales: sc, MaxServerTools: *maxServerTools, PythonScales: ps, Runs: *runs, Workers: *workers,
	}}, nil
}

// benchRun times o's censuses and prints the headline and the table.
func benchRun(ctx context.Context, env *cmdEnv, o benchOptions) error {
	opt := o.opt
	opt.Binary = o.binary
	if opt.Binary == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		opt.Binary = self
	}
	work, err := os.MkdirTemp("", "atlas-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	opt.Work, opt.Logger = work, env.logger(slog.LevelInfo)
	rows, err := bench.Run(ctx, opt)
	if err != nil {
		return err
	}
	isa := bench.CPUFeatures()
	if isa != "" {
		isa = " (" + isa + ")"
	}
	// The header's GOMAXPROCS is the one the runs use: fitted to a CPU
	// quota as run fits itself, where there is one.
	quota := ""
	if q := cpuquota.Fit(); q.Quota > 0 {
		quota = fmt.Sprintf(", CPU quota %.2f", q.Quota)
	}
	fmt.Fprintf(env.stdout, "%s%s, %d cores (GOMAXPROCS %d%s), %s; medians of %d runs\n\n", bench.CPUModel(), isa, runtime.NumCPU(), runtime.GOMAXPROCS(0), quota, runtime.Version(), opt.Runs)
	bench.WriteHeadline(env.stdout, rows)
	fmt.Fprintln(env.stdout)
	bench.WriteTable(env.stdout, rows)
	return nil
}
