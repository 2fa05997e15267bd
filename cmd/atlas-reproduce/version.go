package main

import (
	"context"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
)

// versionOptions is what version's flags say: nothing yet.
type versionOptions struct{}

var runVersion = parsed(parseVersion, version)

// parseVersion parses version's command line.
func parseVersion(env *cmdEnv, args []string) (versionOptions, error) {
	fs := newFlagSet(env, "version", synopsis("version"))
	if err := parseFlags(fs, args); err != nil {
		return versionOptions{}, err
	}
	if fs.NArg() > 0 {
		return versionOptions{}, usageError{"version takes no arguments"}
	}
	return versionOptions{}, nil
}

// version prints the module version and VCS revision of this build.
func version(_ context.Context, env *cmdEnv, _ versionOptions) error {
	fmt.Fprintln(env.stdout, buildinfo.Read())
	return nil
}
