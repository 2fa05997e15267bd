package main

import (
	"context"

	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
)

// inspectOptions is what inspect's flags say.
type inspectOptions struct {
	data         string
	records, top int
}

var runInspect = parsed(parseInspect, inspect)

// parseInspect parses inspect's command line.
func parseInspect(env *cmdEnv, args []string) (inspectOptions, error) {
	fs := newFlagSet(env, "inspect", synopsis("inspect"))
	data := fs.String("data", "", "`PATH`: a folder with the census files or the Zenodo zips, or a zip")
	records := fs.Int("records", 1000, "records to read from the start of each file")
	top := fs.Int("top", 40, "key paths to list per file, most frequent first")
	if err := parseFlags(fs, args); err != nil {
		return inspectOptions{}, err
	}
	if *data == "" || fs.NArg() > 0 || *records <= 0 || *top <= 0 {
		return inspectOptions{}, usageError{"inspect needs --data PATH, positive --records and --top, and no other arguments"}
	}
	return inspectOptions{data: *data, records: *records, top: *top}, nil
}

// inspect prints the record shapes and key paths of the first records of
// each census file.
func inspect(ctx context.Context, env *cmdEnv, o inspectOptions) error {
	return pipeline.Inspect(ctx, o.data, o.records, o.top, env.stdout)
}
