package main

import (
	"context"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/crawl"
)

func runMerge(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "merge", "merge --out DIR SHARD_DIR...")
	out := fs.String("out", "", "output `DIR` of the merged release")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return usageError{"merge needs --out DIR and the folders of every shard (crawl --shard K/N --out SHARD_DIR)"}
	}
	sum, err := crawl.Merge(ctx, *out, fs.Args())
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "merge: %d shards, %d candidates, %d servers: %d reachable, %d unreachable, %d tools; release in %s\n",
		sum.Shards, sum.Candidates, sum.Servers, sum.Reachable, sum.Unreachable, sum.Tools, *out)
	return nil
}
