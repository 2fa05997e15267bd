package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
	"github.com/atlas-reproduce/atlas-reproduce/internal/gunzip"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
)

// sampleOptions is what sample's flags say.
type sampleOptions struct {
	data      string // a JSON Lines file (plain or .gz) or a folder of them
	out       string // the sample folder
	unit      string // property or tool
	perClass  int    // units drawn per rule-positive class
	negatives int    // rule-negative units drawn
	seed      uint64
}

var runSample = parsed(parseSample, runSampleOpts)

// parseSample parses sample's command line.
func parseSample(env *cmdEnv, args []string) (sampleOptions, error) {
	fs := newFlagSet(env, "sample", "sample --data PATH --out DIR [--unit property|tool] [--per-class N] [--negatives N] [--seed N]\n\n"+
		"Draws a stratified random sample to label: --per-class properties (or, with --unit\n"+
		"tool, tools) from each class the rules give and --negatives from those they give none,\n"+
		"seeded and reproducible. PATH is a census folder or file (JSON Lines, plain or gzipped:\n"+
		"census records, tools, or tools/list results). Writes sample.jsonl and strata.json\n"+
		"(docs/evaluate.md).")
	data := fs.String("data", "", "census `PATH`: a JSON Lines file (.jsonl or .jsonl.gz) or a folder of them")
	out := fs.String("out", "", "the sample `DIR` (created if needed)")
	unit := fs.String("unit", "property", "what one item is: `property` or tool")
	per := fs.Int("per-class", 30, "units drawn from each rule class's stratum (`N`)")
	neg := fs.Int("negatives", 150, "units drawn from those the rules give no class (`N`)")
	seed := fs.Uint64("seed", 1, "the draw's `seed`")
	if err := parseFlags(fs, args); err != nil {
		return sampleOptions{}, err
	}
	switch {
	case *data == "" || *out == "" || fs.NArg() > 0:
		return sampleOptions{}, usageError{"sample needs --data PATH and --out DIR, and no other arguments"}
	case *unit != "property" && *unit != "tool":
		return sampleOptions{}, usageError{fmt.Sprintf("--unit %q: want property or tool", *unit)}
	case *per < 0 || *neg < 0 || *per+*neg == 0:
		return sampleOptions{}, usageError{"--per-class and --negatives must be 0 or more, and not both 0"}
	}
	return sampleOptions{data: *data, out: *out, unit: *unit, perClass: *per, negatives: *neg, seed: *seed}, nil
}

// runSampleOpts reads the population, draws, and writes both files as
// one set.
func runSampleOpts(ctx context.Context, env *cmdEnv, o sampleOptions) error {
	files, err := censusFiles(o.data)
	if err != nil {
		return err
	}
	var pop []sample.Item
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		units, err := readUnits(f, o.unit)
		if err != nil {
			return err
		}
		pop = append(pop, units...)
	}
	s := sample.Draw(pop, o.unit, o.perClass, o.negatives, o.seed)
	items, strata, err := s.Encode()
	if err != nil {
		return err
	}
	set, err := outset.Open(o.out)
	if err != nil {
		return err
	}
	defer set.Close()
	if err := set.WriteFile("sample.jsonl", items); err != nil {
		return err
	}
	if err := set.WriteFile("strata.json", strata); err != nil {
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%d items (unit: %s) drawn from %d into %s\n", len(s.Items), o.unit, len(pop), o.out)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.Strata.Strata {
			if !yield(k) {
				return
			}
		}
	}) {
		st := s.Strata.Strata[name]
		fmt.Fprintf(env.stdout, "  %-28s %5d of %d\n", name, st.Drawn, st.Population)
	}
	return nil
}

// censusFiles is path itself, or the JSON Lines files of the folder path
// in name order.
func censusFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".jsonl.gz")) {
			out = append(out, filepath.Join(path, n))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no .jsonl or .jsonl.gz files (a run folder holds no descriptions: sample from the census it read)", path)
	}
	return out, nil
}

// readUnits reads one census file, gunzipping a .gz one.
func readUnits(path, unit string) ([]sample.Item, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gunzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = zr
	}
	return sample.Units(r, path, unit)
}
