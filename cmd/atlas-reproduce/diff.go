package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tooldiff"
)

// diffOptions is what diff's flags and arguments say.
type diffOptions struct {
	old, new string   // run folders or report.json files; one may be "-"
	json     bool     // JSON instead of Markdown
	out      string   // where changes.parquet goes; "" for none
	failOn   []string // classes whose gain fails the diff
}

var runDiff = parsed(parseDiff, diff)

// parseDiff parses diff's command line.
func parseDiff(env *cmdEnv, args []string) (diffOptions, error) {
	fs := newFlagSet(env, "diff", synopsis("diff"))
	asJSON := fs.Bool("json", false, "write JSON instead of Markdown")
	out := fs.String("out", "", "write changes.parquet (one row per tool added, removed or changed) into `DIR`")
	var failClasses classesFlag
	fs.Var(&failClasses, "fail-on", "exit 1 when any tool gained one of these comma-separated `CLASSES` (e.g. gg:command-string,credential-value); repeatable")
	if err := parseFlags(fs, args); err != nil {
		return diffOptions{}, err
	}
	paths := fs.Args()
	if len(paths) != 2 {
		return diffOptions{}, usageError{fmt.Sprintf("diff takes two runs, OLD and NEW (folders or report.json files); got %d argument(s)", len(paths))}
	}
	if paths[0] == "-" && paths[1] == "-" {
		return diffOptions{}, usageError{"only one of OLD and NEW can be standard input"}
	}
	return diffOptions{old: paths[0], new: paths[1], json: *asJSON, out: *out, failOn: failClasses}, nil
}

// diff compares the two runs o names and writes the comparison to stdout.
func diff(ctx context.Context, env *cmdEnv, o diffOptions) error {
	paths := [2]string{o.old, o.new}
	tools := isDir(paths[0]) && isDir(paths[1])
	if !tools && (o.out != "" || len(o.failOn) > 0) {
		return usageError{"--out and --fail-on compare tool by tool: OLD and NEW must both be run output folders"}
	}
	old, err := readReportFile(env, reportPath(paths[0]))
	if err != nil {
		return err
	}
	new, err := readReportFile(env, reportPath(paths[1]))
	if err != nil {
		return err
	}
	d := report.Diff(old, new)
	d.Old.Label, d.New.Label = diffLabel(paths[0]), diffLabel(paths[1])
	var gained []string
	if tools {
		td, err := tooldiff.Compare(ctx, paths[0], paths[1], tooldiff.Options{Out: o.out})
		if err != nil {
			return err
		}
		if err := report.CheckTables(old, new, td, paths[0], paths[1]); err != nil {
			return err
		}
		d.AddTools(td)
		gained = td.Gained(o.failOn)
	}
	if o.json {
		err = d.WriteJSON(env.stdout)
	} else {
		err = d.WriteMarkdown(env.stdout)
	}
	if err != nil {
		return err
	}
	if len(gained) > 0 {
		var counts []string
		for _, id := range gained {
			counts = append(counts, fmt.Sprintf("%s (%d tools)", id, d.ClassesGained[id]))
		}
		return verdictError{"--fail-on: tools gained " + strings.Join(counts, ", ")}
	}
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// reportPath is a run folder's report.json, or p itself.
func reportPath(p string) string {
	if isDir(p) {
		return filepath.Join(p, "report.json")
	}
	return p
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
