package main

import (
	"context"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/report"
)

func init() {
	register(command{
		name:    "diff",
		summary: "compare two report.json files (two census releases, or ours and a reference)",
		run:     runDiff,
	})
}

func runDiff(_ context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "diff", "diff [--json] OLD NEW\n\n"+
		"Prints, per class, bucket and tool-surface figure, both counts, both percentages and\n"+
		"the change, as Markdown (default) or JSON. OLD and NEW are report.json files; one\n"+
		"of them may be - for standard input.")
	asJSON := fs.Bool("json", false, "write JSON instead of Markdown")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	paths := fs.Args()
	if len(paths) != 2 {
		return usageError{fmt.Sprintf("diff takes two report.json files, OLD and NEW; got %d argument(s)", len(paths))}
	}
	if paths[0] == "-" && paths[1] == "-" {
		return usageError{"only one of OLD and NEW can be standard input"}
	}
	old, err := readReportFile(env, paths[0])
	if err != nil {
		return err
	}
	new, err := readReportFile(env, paths[1])
	if err != nil {
		return err
	}
	d := report.Diff(old, new)
	d.Old.Label, d.New.Label = diffLabel(paths[0]), diffLabel(paths[1])
	if *asJSON {
		return d.WriteJSON(env.stdout)
	}
	return d.WriteMarkdown(env.stdout)
}

func diffLabel(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}

func readReportFile(env *cmdEnv, path string) (*report.Report, error) {
	if path == "-" {
		r, err := report.ReadJSON(env.stdin)
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		return r, nil
	}
	return report.ReadFile(path)
}
