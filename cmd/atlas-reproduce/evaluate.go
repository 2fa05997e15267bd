package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate"
	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
)

// evaluateOptions is what evaluate's flags and arguments say.
type evaluateOptions struct {
	sample    string   // the sample folder (sample.jsonl, strata.json)
	labels    []string // labels-NAME.jsonl files, one per rater
	agree     string   // majority, any or all
	out       string   // folder evaluation.json and evaluation.md go to
	seed      uint64   // the bootstrap's seed
	bootstrap int      // bootstrap replicates
	failUnder []threshold
}

// threshold is one --fail-under term: a metric's point estimate below
// value fails; class "" holds for every class.
type threshold struct {
	class, metric string
	value         float64
}

// thresholdsFlag parses --fail-under: comma-separated METRIC=VALUE or
// CLASS.METRIC=VALUE terms, repeatable.
type thresholdsFlag []threshold

func (t *thresholdsFlag) String() string { return fmt.Sprint(*t) }

func (t *thresholdsFlag) Set(v string) error {
	for _, term := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(term), "=")
		if !ok {
			return fmt.Errorf("%q is not METRIC=VALUE", term)
		}
		x, err := strconv.ParseFloat(val, 64)
		if err != nil || x < 0 || x > 1 {
			return fmt.Errorf("%q: the value must be a proportion between 0 and 1", term)
		}
		var th threshold
		th.value = x
		if c, m, ok := strings.Cut(k, "."); ok {
			short, known := sample.ShortName(c)
			if !known {
				return fmt.Errorf("%q: unknown class %q", term, c)
			}
			th.class, k = short, m
		}
		if k != "precision" && k != "recall" && k != "f1" {
			return fmt.Errorf("%q: the metric must be precision, recall or f1", term)
		}
		th.metric = k
		*t = append(*t, th)
	}
	return nil
}

var runEvaluate = parsed(parseEvaluate, runEvaluateOpts)

// parseEvaluate parses evaluate's command line.
func parseEvaluate(env *cmdEnv, args []string) (evaluateOptions, error) {
	fs := newFlagSet(env, "evaluate", synopsis("evaluate"))
	dir := fs.String("sample", "", "the sample `DIR` (sample.jsonl and strata.json)")
	var labels []string
	fs.Func("labels", "a rater's labels `FILE` (labels-NAME.jsonl); repeatable, and the arguments after the flags are labels files too", func(s string) error {
		labels = append(labels, s)
		return nil
	})
	agree := fs.String("agree", evaluate.Majority, "when an item carries a class: `majority` of its raters, any, or all")
	out := fs.String("out", ".", "write evaluation.json and evaluation.md into `DIR`")
	seed := fs.Uint64("seed", 1, "the bootstrap's `seed`")
	boot := fs.Int("bootstrap", 2000, "bootstrap replicates (`N`)")
	var fail thresholdsFlag
	fs.Var(&fail, "fail-under", "exit 1 when a point estimate is below a `TERMS` threshold: precision=0.5,recall=0.4,f1=0.4, or per class credential.precision=0.3; repeatable")
	if err := parseFlags(fs, args); err != nil {
		return evaluateOptions{}, err
	}
	labels = append(labels, fs.Args()...)
	if *dir == "" {
		return evaluateOptions{}, usageError{"evaluate needs --sample DIR"}
	}
	if len(labels) == 0 {
		return evaluateOptions{}, usageError{"evaluate needs at least one --labels FILE"}
	}
	if *agree != evaluate.Majority && *agree != evaluate.Any && *agree != evaluate.All {
		return evaluateOptions{}, usageError{fmt.Sprintf("--agree %q: want majority, any or all", *agree)}
	}
	if *boot < 100 {
		return evaluateOptions{}, usageError{"--bootstrap must be at least 100"}
	}
	return evaluateOptions{sample: *dir, labels: labels, agree: *agree, out: *out, seed: *seed, bootstrap: *boot, failUnder: fail}, nil
}

// runEvaluateOpts evaluates, writes both files atomically, prints the table
// and holds the thresholds.
func runEvaluateOpts(ctx context.Context, env *cmdEnv, o evaluateOptions) error {
	s, err := sample.Read(o.sample)
	if err != nil {
		return err
	}
	known := make(map[int]bool, len(s.Items))
	for _, it := range s.Items {
		known[it.ID] = true
	}
	var raters []sample.Rater
	seen := map[string]string{}
	for _, p := range o.labels {
		r, err := sample.ReadLabels(p, known)
		if err != nil {
			return err
		}
		if prev, dup := seen[r.Name]; dup {
			return usageError{fmt.Sprintf("%s and %s are both rater %q", prev, p, r.Name)}
		}
		seen[r.Name] = p
		raters = append(raters, r)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ev, err := evaluate.Evaluate(s, raters, evaluate.Options{Agree: o.agree, Bootstrap: o.bootstrap, Seed: o.seed})
	if err != nil {
		return err
	}
	js, err := ev.JSON()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if err := outset.WriteFile(filepath.Join(o.out, "evaluation.json"), js, 0o644); err != nil {
		return err
	}
	if err := outset.WriteFile(filepath.Join(o.out, "evaluation.md"), ev.Markdown(), 0o644); err != nil {
		return err
	}
	fmt.Fprint(env.stdout, ev.Table())
	if failed := belowThresholds(ev, o.failUnder); len(failed) > 0 {
		return verdictError{"below --fail-under: " + strings.Join(failed, "; ")}
	}
	return nil
}

// belowThresholds lists every class and metric whose point estimate is
// below its threshold (an undefined estimate fails too: nothing measured).
func belowThresholds(ev *evaluate.Evaluation, ts []threshold) []string {
	var out []string
	for _, t := range ts {
		for _, c := range ev.Classes {
			if t.class != "" && t.class != c.Short {
				continue
			}
			v := map[string]float64{"precision": c.Precision.Estimate, "recall": c.Recall.Estimate, "f1": c.F1.Estimate}[t.metric]
			if !(v >= t.value) {
				out = append(out, fmt.Sprintf("%s %s %s < %g", c.Class, t.metric, evaluate.Pct(v), t.value))
			}
		}
	}
	return out
}

// readEvaluation reads run --evaluation's evaluation.json.
func readEvaluation(path string) (*evaluate.Evaluation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ev, err := evaluate.Read(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ev, nil
}
