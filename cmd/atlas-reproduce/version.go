package main

import (
	"context"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
)

func runVersion(_ context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "version", "version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"version takes no arguments"}
	}
	fmt.Fprintln(env.stdout, buildinfo.Read())
	return nil
}
