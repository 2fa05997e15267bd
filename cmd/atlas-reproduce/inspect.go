package main

import (
	"context"

	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
)

func runInspect(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "inspect", "inspect --data PATH [--records N] [--top N]")
	data := fs.String("data", "", "`PATH`: a folder with the census files or the Zenodo zips, or a zip")
	records := fs.Int("records", 1000, "records to read from the start of each file")
	top := fs.Int("top", 40, "key paths to list per file, most frequent first")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *data == "" || fs.NArg() > 0 || *records <= 0 || *top <= 0 {
		return usageError{"inspect needs --data PATH, positive --records and --top, and no other arguments"}
	}
	return pipeline.Inspect(ctx, *data, *records, *top, env.stdout)
}
