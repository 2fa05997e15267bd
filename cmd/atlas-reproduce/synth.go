package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// synthOptions is what synth's flags say.
type synthOptions struct {
	out      string
	opt      synth.Options // the census to write, without Progress
	progress bool          // draw a bar when stderr is a terminal
	// nextOf, when set, asks instead for a next release of the synthetic
	// census in that folder, with edits edits, seeded by opt.Seed.
	nextOf string
	edits  int
}

var runSynth = parsed(parseSynth, synthesise)

// parseSynth parses synth's command line.
func parseSynth(env *cmdEnv, args []string) (synthOptions, error) {
	def := synth.DefaultOptions()
	fs := newFlagSet(env, "synth", "synth --out DIR [flags]\n\n"+
		"With --next-of DIR, writes instead a next release of the census in DIR (see --edits).\n"+
		"Writes a synthetic census into DIR: "+release.ToolsFile+", "+release.ServersFile+",\n"+
		release.CandidatesFile+", a "+release.SumsFile+" manifest of the three, and "+synth.TruthFile+",\n"+
		"the counts `python3 bench/reference.py census` gives for it. The bytes depend only\n"+
		"on the flags, not on the machine. Existing files of those names are replaced.")
	out := fs.String("out", "", "write into `DIR` (created if missing; required)")
	tools := fs.Int("tools", def.Tools, "number of tools")
	servers := fs.Int("servers", def.Servers, "number of servers (each gets at least one tool; default: the snapshot's tools per server, scaled with --tools)")
	seed := fs.Uint64("seed", def.Seed, "random seed")
	shape := fs.String("shape", def.Shape, "record shape of "+release.ToolsFile+": `servers` (one line per server) or tools (one line per tool)")
	maxServerTools := fs.Int("max-server-tools", 0, "give the census a heavy tail: the largest server has `N` tools, the next ones a Pareto share of it (0: none)")
	dense := fs.Bool("dense", false, "a property-dense census: about four properties a tool, with descriptions of a few words")
	nearMiss := fs.Bool("near-miss", false, "the held-back census's shape: zero to a few properties a tool, half of them near-misses of the rules' words (pathology_code, secretariat_note), every definition distinct, about 10:1 in gzip; use with --servers 13502")
	workers := fs.Int("workers", 0, "generating goroutines (0: GOMAXPROCS); the output is the same for any value")
	progress := fs.Bool("progress", true, "draw a progress bar when stderr is a terminal")
	nextOf := fs.String("next-of", "", "instead of a new census, write into --out a next release of the synthetic census in `DIR`: --edits seeded edits (tools added, removed, changed, and changed to gain gg:credential-value), listed in "+synth.EditsFile+", so that diff can be tried at once")
	edits := fs.Int("edits", 20, "with --next-of, the number of edits (at most one per server)")
	if err := parseFlags(fs, args); err != nil {
		return synthOptions{}, err
	}
	o := synthOptions{out: *out, progress: *progress, nextOf: *nextOf, edits: *edits}
	if *nextOf != "" {
		o.opt.Seed = *seed
		return o, checkSynthNext(fs, o)
	}
	if !flagSet(fs, "servers") && flagSet(fs, "tools") {
		*servers = scaledServers(*tools)
	}
	switch {
	case fs.NArg() > 0:
		return o, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case *out == "":
		return o, usageError{"--out is required"}
	case *shape != synth.ShapeServers && *shape != synth.ShapeTools:
		return o, usageError{fmt.Sprintf("--shape must be %s or %s, not %q", synth.ShapeServers, synth.ShapeTools, *shape)}
	case *servers < 1:
		return o, usageError{"--servers must be at least 1"}
	case *tools < *servers:
		return o, usageError{fmt.Sprintf("--tools (%d) must be at least --servers (%d): every server has a tool", *tools, *servers)}
	case *workers < 0:
		return o, usageError{"--workers must not be negative"}
	case *maxServerTools < 0:
		return o, usageError{"--max-server-tools must not be negative"}
	case *maxServerTools > 0 && *tools-*maxServerTools < *servers-1:
		return o, usageError{fmt.Sprintf("--max-server-tools %d leaves too few of --tools %d for the other %d servers", *maxServerTools, *tools, *servers-1)}
	}
	o.opt = synth.Options{Tools: *tools, Servers: *servers, Seed: *seed, Shape: *shape, Workers: *workers, MaxServerTools: *maxServerTools, Dense: *dense, NearMiss: *nearMiss}
	return o, nil
}

// synthesise writes the synthetic census o asks for, or its next release.
func synthesise(ctx context.Context, env *cmdEnv, o synthOptions) error {
	if o.nextOf != "" {
		return synthNext(ctx, env, o)
	}
	opt := o.opt
	con := env.console()
	opt.Progress = con.toolsProgress(env.drawBars(o.progress), opt.Tools)
	start := time.Now()
	truth, err := synth.Write(ctx, o.out, opt)
	con.end(err == nil)
	if err != nil {
		return err
	}
	var size int64
	for _, name := range []string{release.ToolsFile, release.ServersFile, release.CandidatesFile} {
		if fi, err := os.Stat(filepath.Join(o.out, name)); err == nil {
			size += fi.Size()
		}
	}
	fmt.Fprintf(env.stderr, "synth: %d tools on %d servers (shape %s, seed %d) in %s, %s written, truth in %s, %.1fs\n",
		truth.Tools, truth.Servers, opt.Shape, opt.Seed, o.out, synthSize(size),
		filepath.Join(o.out, synth.TruthFile), time.Since(start).Seconds())
	return nil
}

// synthSize formats a byte count in MB with one decimal, enough for a summary.
func synthSize(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// scaledServers is the server count for a census of tools tools with the
// snapshot's tools per server, at least one, so that `--tools 1000` alone
// is a small census rather than an error.
func scaledServers(tools int) int {
	if tools < 1 {
		return 1 // validated below as --tools
	}
	return max(1, int(int64(tools)*synth.DefaultServers/synth.DefaultTools))
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// checkSynthNext holds synth --next-of's command line to what applies.
func checkSynthNext(fs *flag.FlagSet, o synthOptions) error {
	for _, f := range []string{"tools", "servers", "shape", "max-server-tools", "dense", "near-miss", "workers"} {
		if flagSet(fs, f) {
			return usageError{fmt.Sprintf("--next-of edits an existing census; --%s does not apply", f)}
		}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case o.out == "":
		return usageError{"--out is required"}
	case o.edits < 1:
		return usageError{"--edits must be at least 1"}
	}
	return nil
}

// synthNext is synth --next-of: a next release of a synthetic census.
func synthNext(ctx context.Context, env *cmdEnv, o synthOptions) error {
	from, out, edits, seed := o.nextOf, o.out, o.edits, o.opt.Seed
	made, err := synth.Next(ctx, from, out, edits, seed)
	if err != nil {
		return err
	}
	byKind := map[string]int{}
	for _, e := range made {
		byKind[e.Kind]++
	}
	fmt.Fprintf(env.stderr, "synth: next release of %s in %s: %d tools added, %d removed, %d changed, %d changed gaining gg:credential-value (seed %d), listed in %s\n",
		from, out, byKind[synth.EditAdded], byKind[synth.EditRemoved], byKind[synth.EditChanged], byKind[synth.EditGained], seed, filepath.Join(out, synth.EditsFile))
	return nil
}
