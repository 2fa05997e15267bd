package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate"
	"github.com/atlas-reproduce/atlas-reproduce/evaluate/sample"
	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

// sharedSample is the bundled first part of the shared labelled sample.
var sharedSample = filepath.Join("..", "..", "evaluate", "testdata", "shared-sample")

// TestEvaluateCommand runs evaluate on the shared sample through its
// command line: both files written, the table printed, and --fail-under
// a verdict (exit 1) only when a threshold is missed.
func TestEvaluateCommand(t *testing.T) {
	labels := []string{filepath.Join(sharedSample, "labels-A.jsonl"), filepath.Join(sharedSample, "labels-B.jsonl")}
	tests := []struct {
		fail    string
		verdict bool
		names   []string
	}{
		{"", false, nil},
		{"precision=0.25", false, nil},
		{"precision=0.5", true, []string{"gg:credential-value precision", "gg:command-string precision", "gg:money-amount precision"}},
		{"filesystem.precision=0.95", true, []string{"gg:filesystem-path precision 93%"}},
	}
	for _, tc := range tests {
		t.Run(tc.fail, func(t *testing.T) {
			out := t.TempDir()
			args := []string{"--sample", sharedSample, "--out", out, "--bootstrap", "200"}
			if tc.fail != "" {
				args = append(args, "--fail-under", tc.fail)
			}
			var stdout, stderr bytes.Buffer
			env := &cmdEnv{stdout: &stdout, stderr: &stderr}
			o, err := parseEvaluate(env, append(args, labels...))
			if err != nil {
				t.Fatal(err)
			}
			err = runEvaluateOpts(context.Background(), env, o)
			var ve verdictError
			if tc.verdict != errors.As(err, &ve) {
				t.Fatalf("err = %v; verdict wanted: %v", err, tc.verdict)
			}
			if !tc.verdict && err != nil {
				t.Fatal(err)
			}
			for _, n := range tc.names {
				if !strings.Contains(ve.msg, n) {
					t.Errorf("verdict %q does not name %q", ve.msg, n)
				}
			}
			b, err := os.ReadFile(filepath.Join(out, "evaluation.json"))
			if err != nil {
				t.Fatal(err)
			}
			ev, err := evaluate.Read(b)
			if err != nil || len(ev.Classes) != 5 || len(ev.Raters) != 2 {
				t.Fatalf("evaluation.json: %v", err)
			}
			md, err := os.ReadFile(filepath.Join(out, "evaluation.md"))
			if err != nil || !bytes.Contains(md, []byte(ev.Table())) || !strings.Contains(stdout.String(), ev.Table()) {
				t.Errorf("evaluation.md or standard output lacks the table (%v)", err)
			}
		})
	}
}

// TestParseEvaluateUsage holds the usage errors (exit 2).
func TestParseEvaluateUsage(t *testing.T) {
	for _, args := range [][]string{
		{"labels-A.jsonl"},
		{"--sample", "x"},
		{"--sample", "x", "--agree", "most", "l.jsonl"},
		{"--sample", "x", "--fail-under", "precision=2", "l.jsonl"},
		{"--sample", "x", "--fail-under", "accuracy=0.5", "l.jsonl"},
		{"--sample", "x", "--fail-under", "bogus.precision=0.5", "l.jsonl"},
	} {
		var buf bytes.Buffer
		_, err := parseEvaluate(&cmdEnv{stdout: &buf, stderr: &buf}, args)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
}

// TestEvaluationInRun is the shared sample end to end through the binary:
// evaluate writes evaluation.json (and exits 1 on a missed --fail-under),
// and run --evaluation shows it in report.md and report.html; a run
// without it says the counts are unmeasured.
func TestEvaluationInRun(t *testing.T) {
	dir := t.TempDir()
	labels := []string{filepath.Join(sharedSample, "labels-A.jsonl"), filepath.Join(sharedSample, "labels-B.jsonl")}
	args := append([]string{"evaluate", "--sample", sharedSample, "--out", dir, "--bootstrap", "200"}, labels...)
	if _, stderr, code := run(t, "", append(args, "--fail-under", "precision=0.9")...); code != exitVerdict || !strings.Contains(stderr, "below --fail-under") {
		t.Fatalf("evaluate --fail-under precision=0.9: exit %d, want %d\n%s", code, exitVerdict, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "evaluation.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := evaluate.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := makeCensus(t, 2000)
	for _, with := range []bool{true, false} {
		out := t.TempDir()
		args := []string{"run", "--data", data, "--sha256sums", filepath.Join(data, "SHA256SUMS"), "--out", out, "--progress=false"}
		if with {
			args = append(args, "--evaluation", filepath.Join(dir, "evaluation.json"))
		}
		if _, stderr, code := run(t, "", args...); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
		md, _ := os.ReadFile(filepath.Join(out, "report.md"))
		page, _ := os.ReadFile(filepath.Join(out, "report.html"))
		if with != strings.Contains(string(md), ev.Table()) || with != bytes.Contains(page, []byte(`id="evaluation-chart"`)) {
			t.Errorf("with evaluation %v: report.md has the table %v, report.html the chart %v", with,
				strings.Contains(string(md), ev.Table()), bytes.Contains(page, []byte(`id="evaluation-chart"`)))
		}
		if !with && !strings.Contains(string(md), "have not been measured for this census") {
			t.Error("a run without an evaluation does not say its counts are unmeasured")
		}
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"unit": "property"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, "", "run", "--data", data, "--sha256sums", filepath.Join(data, "SHA256SUMS"), "--out", t.TempDir(), "--evaluation", bad); code == 0 || !strings.Contains(stderr, "bad.json") {
		t.Errorf("run --evaluation with a bad file: exit %d, stderr %q; want a failure naming the file", code, stderr)
	}
}

// TestSampleThenEvaluate draws tools from the bundled real schemas and
// evaluates them with labels that copy the rules: every precision and
// recall is then 1 and the true count the rules' own, whatever the draw.
func TestSampleThenEvaluate(t *testing.T) {
	dir := t.TempDir()
	env := &cmdEnv{stdout: io.Discard, stderr: io.Discard}
	o, err := parseSample(env, []string{"--data", realcorpus.Path(), "--out", dir, "--unit", "tool", "--per-class", "10", "--negatives", "20", "--seed", "5"})
	if err != nil {
		t.Fatal(err)
	}
	if err := runSampleOpts(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	s, err := sample.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Strata.Unit != "tool" || len(s.Items) != 5*10+20 {
		t.Fatalf("unit %s, %d items", s.Strata.Unit, len(s.Items))
	}
	var lines []byte
	for _, it := range s.Items {
		l := sample.Label{ID: it.ID, Credential: it.RuleHas("credential"), Filesystem: it.RuleHas("filesystem"),
			Command: it.RuleHas("command"), Money: it.RuleHas("money"), URL: it.RuleHas("url")}
		b, _ := json.Marshal(l)
		lines = append(append(lines, b...), '\n')
	}
	lp := filepath.Join(dir, "labels-rules.jsonl")
	if err := os.WriteFile(lp, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	eo, err := parseEvaluate(env, []string{"--sample", dir, "--out", dir, "--bootstrap", "100", "--fail-under", "precision=1,recall=1", lp})
	if err != nil {
		t.Fatal(err)
	}
	if err := runEvaluateOpts(context.Background(), env, eo); err != nil {
		t.Fatalf("labels equal to the rules: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "evaluation.json"))
	ev, err := evaluate.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ev.Classes {
		// The rule count is estimated (a tool with two classes stands in
		// the first one's stratum), at least the class's own stratum.
		if math.Abs(c.TrueCount.Estimate-c.RuleCount) > 1e-6 || c.RuleCount < float64(s.Strata.Strata["pos:"+c.Class].Population)-1e-6 {
			t.Errorf("%s: true %v, rule %v, stratum %d", c.Class, c.TrueCount.Estimate, c.RuleCount, s.Strata.Strata["pos:"+c.Class].Population)
		}
	}
}

// TestSampleFromRun samples a synthetic census through its run folder and
// through the census folder alike, and the tools it reads carry the
// classes the run counted: per class, as many tools as report.json says.
func TestSampleFromRun(t *testing.T) {
	data, _ := makeCensus(t, 3000)
	runDir := t.TempDir()
	if _, stderr, code := run(t, "", "run", "--data", data, "--sha256sums", filepath.Join(data, "SHA256SUMS"), "--out", runDir, "--progress=false"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	env := &cmdEnv{stdout: io.Discard, stderr: io.Discard}
	var drawn [2][]byte
	for i, from := range []string{runDir, data} {
		out := t.TempDir()
		o, err := parseSample(env, []string{"--data", from, "--out", out, "--seed", "9"})
		if err != nil {
			t.Fatal(err)
		}
		if err := runSampleOpts(context.Background(), env, o); err != nil {
			t.Fatalf("sample --data %s: %v", from, err)
		}
		if drawn[i], err = os.ReadFile(filepath.Join(out, "sample.jsonl")); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(drawn[0], drawn[1]) || len(drawn[0]) == 0 {
		t.Error("the run folder and its census draw different samples")
	}
	files, err := censusFiles(env, runDir)
	if err != nil || len(files) != 1 {
		t.Fatalf("census files of the run: %v, %v", files, err)
	}
	tools, err := readUnits(files[0], "tool")
	if err != nil {
		t.Fatal(err)
	}
	r, err := readReportFile(env, filepath.Join(runDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	for id, c := range r.Classes {
		n := int64(0)
		for _, it := range tools {
			if slices.Contains(it.Rule, id) {
				n++
			}
		}
		if n != c.Tools {
			t.Errorf("%s: %d sampled tools carry it, report.json counts %d", id, n, c.Tools)
		}
	}
}
