package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/history"
)

func runHistory(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "history", "history --out DATASET RUN_DIR... [--replace]\n\n"+
		"Adds each run folder (run, reproduce) to the dataset folder DATASET as the partition of\n"+
		"its release, DATASET/release=<id>/, holding the run's tools.parquet, properties.parquet,\n"+
		"classes.parquet and report.json unchanged; then rebuilds, from every partition,\n"+
		"history.parquet (one row per release and class, beside the release before as diff\n"+
		"compares two runs), history.md and history.html (class shares over the releases and\n"+
		"the tools added, removed and changed, as charts). A run names its release in its\n"+
		"report.json (run --release-id, --release-date). Adding a run again changes nothing;\n"+
		"another run of a release already in the dataset is refused unless --replace.")
	out := fs.String("out", "", "the dataset `DIR` (created if missing; required)")
	replace := fs.Bool("replace", false, "let a run take the place of another run of the same release id in the dataset")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return usageError{"history needs --out DATASET and at least one run folder"}
	}
	res, err := history.Add(ctx, history.Options{Dataset: *out, Runs: fs.Args(), Replace: *replace})
	if err != nil {
		return err
	}
	say := func(what string, ids []string) string {
		if len(ids) == 0 {
			return ""
		}
		return fmt.Sprintf("; %s %s", what, strings.Join(ids, ", "))
	}
	hist := "history unchanged"
	if res.HistoryChanged {
		hist = "history rewritten"
	}
	fmt.Fprintf(env.stderr, "atlas-reproduce history: %s: %d releases%s%s%s; %s (pairs of consecutive releases compared: %d, kept from the history before: %d)\n", *out, len(res.Releases),
		say("added", res.Added), say("replaced", res.Replaced), say("already there", res.Unchanged), hist, res.Compared, res.Reused)
	return nil
}
