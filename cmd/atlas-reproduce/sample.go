package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
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
	fs := newFlagSet(env, "sample", synopsis("sample"))
	data := fs.String("data", "", "`PATH`: a run folder, a census folder, or a JSON Lines file (.jsonl or .jsonl.gz)")
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
	files, err := censusFiles(env, o.data)
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

// censusFiles is what sample reads from path: the file itself; for a run
// folder (it has report.json) the census tools file the run read; for a
// census release folder its server_tools.jsonl.gz; for any other folder
// its JSON Lines files in name order.
func censusFiles(env *cmdEnv, path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	if rp := filepath.Join(path, "report.json"); isFile(rp) {
		r, err := readReportFile(env, rp)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, in := range r.Inputs {
			if in.Name != release.ToolsFile {
				continue
			}
			if strings.Contains(in.Location, "!") {
				return nil, fmt.Errorf("%s: the run read its tools from inside a zip (%s): unzip it and give sample --data the folder", rp, in.Location)
			}
			if !isFile(in.Location) {
				return nil, fmt.Errorf("%s: the run read its tools from %s, which is not there now: give sample --data the census folder", rp, in.Location)
			}
			out = append(out, in.Location)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s: the run read no %s", rp, release.ToolsFile)
		}
		return out, nil
	}
	if tf := filepath.Join(path, release.ToolsFile); isFile(tf) {
		return []string{tf}, nil
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
		return nil, fmt.Errorf("%s: no census: no report.json, %s, nor .jsonl or .jsonl.gz files", path, release.ToolsFile)
	}
	return out, nil
}

// isFile reports whether path is a regular file.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// readUnits reads one census file, gunzipping a .gz one.
func readUnits(path, unit string) ([]sample.Item, error) {
	r, err := openreg.OpenGunzipped(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return sample.Units(r, path, unit)
}
