package main

import (
	"context"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/crawl"
)

// mergeOptions is what merge's flags and arguments say.
type mergeOptions struct {
	out    string   // the merged release's folder
	shards []string // every shard's folder
}

var runMerge = parsed(parseMerge, merge)

// parseMerge parses merge's command line.
func parseMerge(env *cmdEnv, args []string) (mergeOptions, error) {
	fs := newFlagSet(env, "merge", synopsis("merge"))
	out := fs.String("out", "", "output `DIR` of the merged release")
	if err := parseFlags(fs, args); err != nil {
		return mergeOptions{}, err
	}
	if *out == "" || fs.NArg() == 0 {
		return mergeOptions{}, usageError{"merge needs --out DIR and the folders of every shard (crawl --shard K/N --out SHARD_DIR)"}
	}
	return mergeOptions{out: *out, shards: fs.Args()}, nil
}

// merge joins the shards o names into one release and says what it holds.
func merge(ctx context.Context, env *cmdEnv, o mergeOptions) error {
	sum, err := crawl.Merge(ctx, o.out, o.shards)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "merge: %d shards, %d candidates, %d servers: %d reachable, %d unreachable, %d tools; release in %s\n",
		sum.Shards, sum.Candidates, sum.Servers, sum.Reachable, sum.Unreachable, sum.Tools, o.out)
	return nil
}
