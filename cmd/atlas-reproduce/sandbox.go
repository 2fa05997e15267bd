package main

import (
	"context"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// sandboxOptions is what sandbox's arguments say: its one subcommand,
// check, takes nothing.
type sandboxOptions struct{}

var runSandbox = parsed(parseSandbox, sandboxCheck)

// parseSandbox parses "sandbox check".
func parseSandbox(env *cmdEnv, args []string) (sandboxOptions, error) {
	fs := newFlagSet(env, "sandbox", synopsis("sandbox"))
	if err := parseFlags(fs, args); err != nil {
		return sandboxOptions{}, err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "check" {
		return sandboxOptions{}, usageError{"sandbox takes one argument: check"}
	}
	return sandboxOptions{}, nil
}

// sandboxCheck finds the sandbox packaged servers run in, and prints what
// is missing, or what a sandbox allows.
func sandboxCheck(ctx context.Context, env *cmdEnv, _ sandboxOptions) error {
	r := sandbox.Check(ctx)
	if len(r.Problems) > 0 {
		for _, p := range r.Problems {
			fmt.Fprintln(env.stdout, "missing: "+p)
		}
		return verdictError{"no working sandbox here; packaged servers become records of kind no_sandbox (crawl) or fail (scan)"}
	}
	fmt.Fprintln(env.stdout, "sandbox: works")
	for _, a := range r.Allows {
		fmt.Fprintln(env.stdout, "  "+a)
	}
	return nil
}
