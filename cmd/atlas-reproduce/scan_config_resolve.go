package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/agentconfig"
	"github.com/atlas-reproduce/atlas-reproduce/internal/ociroot"
)

// resolveTimeout bounds one question to a registry.
const resolveTimeout = 60 * time.Second

// resolveUnpinned asks the registry which version an unpinned server's
// command would run now, the way its client's runner resolves it, and
// returns the target pinned to that version. Nothing of the package is
// run or installed on the host:
//
//   - npm: `npm view NAME@SPEC version` with the host's npm and its
//     configuration (registry, .npmrc), which applies dist-tags and ranges
//     exactly as npx does; a range takes the highest version it matches.
//   - PyPI: `pip index versions NAME` (PIP_INDEX_URL and pip's
//     configuration), the latest release, as uvx and pipx run take it; a
//     version specifier (NAME>=1.0,<2) is resolved by pip's own resolver
//     (`pip install --dry-run --no-deps --report`), nothing installed.
//   - OCI: the digest the registry gives the tag now (latest when the
//     command names none), as docker run pulls it.
func resolveUnpinned(ctx context.Context, t agentconfig.Target) (agentconfig.Target, error) {
	if t.Package == "" {
		return t, errors.New("the command names no package")
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	var err error
	switch t.Kind {
	case agentconfig.KindNPM:
		t.Version, err = npmResolve(ctx, t.Package, t.Spec)
	case agentconfig.KindPyPI:
		if t.Spec != "" {
			t.Version, err = pipResolveSpec(ctx, t.Package+t.Spec)
		} else {
			t.Version, err = pipResolve(ctx, t.Package)
		}
	case agentconfig.KindOCI:
		tag := t.Spec
		if tag == "" {
			tag = "latest"
		}
		var im *ociroot.Image
		// Plain HTTP reaches only a registry on a loopback address, as
		// container tools allow for localhost.
		if im, err = ociroot.Resolve(ctx, t.Package+":"+tag, ociroot.Options{PlainHTTP: true}); err == nil {
			t.Version = im.Digest
		}
	default:
		return t, fmt.Errorf("no registry resolves a %s server", t.Kind)
	}
	if err == nil && t.Version == "" {
		err = errors.New("the registry named no version")
	}
	return t, err
}

// runTool runs a registry client on the host and returns its standard
// output; its error carries the first line of its standard error.
func runTool(ctx context.Context, name string, args ...string) ([]byte, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s is not on PATH", name)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// npmResolve is the version npm gives name@spec (spec empty: latest).
func npmResolve(ctx context.Context, name, spec string) (string, error) {
	if spec == "" {
		spec = "latest"
	}
	out, err := runTool(ctx, "npm", "view", "--json", name+"@"+spec, "version")
	if err != nil {
		return "", err
	}
	// One matching version prints a string, several an array in
	// ascending order: the last is what npx installs.
	var one string
	if json.Unmarshal(out, &one) == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(out, &many); err != nil || len(many) == 0 {
		return "", fmt.Errorf("npm view %s@%s: no version in %q", name, spec, bytes.TrimSpace(out))
	}
	return many[len(many)-1], nil
}

// pipResolveSpec is the release pip would install for requirement (a
// name and a version specifier), from its dry run's report: the highest
// the specifier allows, as pip, uv and pipx choose it.
func pipResolveSpec(ctx context.Context, requirement string) (string, error) {
	dir, err := os.MkdirTemp("", "atlas-pip-resolve-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	out, err := runTool(ctx, "python3", "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
		"--disable-pip-version-check", "--quiet", "--target", dir, "--report", "-", "--", requirement)
	if err != nil {
		return "", err
	}
	var report struct {
		Install []struct {
			Metadata struct{ Version string } `json:"metadata"`
		} `json:"install"`
	}
	if err := json.Unmarshal(out, &report); err != nil || len(report.Install) != 1 {
		return "", fmt.Errorf("pip's dry run for %s: no one release in its report (%v)", requirement, err)
	}
	return report.Install[0].Metadata.Version, nil
}

// pipResolve is the latest release of name on pip's index: the first line
// of `pip index versions` is "NAME (VERSION)".
func pipResolve(ctx context.Context, name string) (string, error) {
	out, err := runTool(ctx, "python3", "-m", "pip", "index", "versions", "--disable-pip-version-check", name)
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(string(out), "\n")
	open, close := strings.LastIndexByte(first, '('), strings.LastIndexByte(first, ')')
	if open < 0 || close < open {
		return "", fmt.Errorf("pip index versions %s: no version in %q", name, first)
	}
	return first[open+1 : close], nil
}
