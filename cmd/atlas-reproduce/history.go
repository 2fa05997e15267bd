package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/history"
)

// historyOptions is what history's flags and arguments say.
type historyOptions struct {
	out     string   // the dataset folder
	runs    []string // run folders to add
	replace bool     // a run may replace another of its release id
}

var runHistory = parsed(parseHistory, historyRun)

// parseHistory parses history's command line.
func parseHistory(env *cmdEnv, args []string) (historyOptions, error) {
	fs := newFlagSet(env, "history", synopsis("history"))
	out := fs.String("out", "", "the dataset `DIR` (created if missing; required)")
	replace := fs.Bool("replace", false, "let a run take the place of another run of the same release id in the dataset")
	if err := parseFlags(fs, args); err != nil {
		return historyOptions{}, err
	}
	if *out == "" || fs.NArg() == 0 {
		return historyOptions{}, usageError{"history needs --out DATASET and at least one run folder"}
	}
	return historyOptions{out: *out, runs: fs.Args(), replace: *replace}, nil
}

// historyRun adds o's runs to o's dataset and says what changed.
func historyRun(ctx context.Context, env *cmdEnv, o historyOptions) error {
	res, err := history.Add(ctx, history.Options{Dataset: o.out, Runs: o.runs, Replace: o.replace})
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
	fmt.Fprintf(env.stderr, "atlas-reproduce history: %s: %d releases%s%s%s; %s (pairs of consecutive releases compared: %d, kept from the history before: %d)\n", o.out, len(res.Releases),
		say("added", res.Added), say("replaced", res.Replaced), say("already there", res.Unchanged), hist, res.Compared, res.Reused)
	return nil
}
