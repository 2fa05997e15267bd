package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
	"github.com/atlas-reproduce/atlas-reproduce/publish"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// depositRun is a run over a deposit made by publish: the deposit, and
// the verdict of holding the run to its published table once the run has
// its figures.
type depositRun struct {
	dep     *publish.Deposit
	verdict *publish.Verdict
}

// depositInputs recognises a deposit made by publish in data when the
// run is left to choose its hashes: it verifies every file of the deposit
// against its SHA256SUMS, has the run held to that manifest, and has the
// finished report held to the deposit's published table before it is
// written (opt.Hold), so that report.json, .md and .html carry the
// verdict. It returns nil for data that is no deposit. With tableOnly
// (run), a release without a published table is left to run's usual
// rules.
func depositInputs(data string, opt *pipeline.Options, rf *runFlags, tableOnly bool) (*depositRun, error) {
	if rf.sums != "" || rf.noVerify {
		return nil, nil
	}
	dep, err := publish.Find(data)
	if err != nil || dep == nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(data, publish.ReportFile)); tableOnly && err != nil {
		return nil, nil
	}
	if sameFolder(data, opt.Out) {
		// The run's report.json and classes.parquet would replace the
		// published table it is to be held to.
		return nil, usageError{fmt.Sprintf("--out %s is the deposit itself: write the run's outputs into another folder", opt.Out)}
	}
	if err := dep.Verify(); err != nil {
		return nil, err
	}
	opt.Manifest, opt.ManifestName = dep.Sums, "the deposit's "+publish.SumsFile
	d := &depositRun{dep: dep}
	opt.Hold = d.hold
	return d, nil
}

// hold is the pipeline's Hold: the run's report held to the deposit.
func (d *depositRun) hold(r *report.Report) error {
	v, err := d.dep.Hold(r)
	if err != nil {
		return err
	}
	d.verdict = v
	r.Deposit = &report.DepositCheck{Verdict: v.Verdict, Differences: v.Differences}
	return nil
}

// finish writes the verdict to w and into the run's output folder out,
// and returns a verdictError unless it is REPRODUCED.
func (d *depositRun) finish(w io.Writer, out string) error {
	v := d.verdict
	if v == nil {
		return fmt.Errorf("deposit %s: the run was not held to it", d.dep.Dir)
	}
	if err := d.dep.WriteVerdict(out, v); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n## Held to the deposit's published table\n\n")
	if v.Verdict == "" {
		fmt.Fprintf(w, "A release with no published counts: its files verify against its %s, but it publishes no %s to hold the run to.\n", publish.SumsFile, publish.ReportFile)
		return verdictError{"a release with no published counts: nothing to reproduce"}
	}
	fmt.Fprintf(w, "**%s**: the run's counts beside the deposit's %s and %s.\n", v.Verdict, publish.ReportFile, publish.ClassesFile)
	for _, diff := range v.Differences {
		fmt.Fprintf(w, "- %s\n", diff)
	}
	if v.Verdict != report.VerdictReproduced {
		return verdictError{fmt.Sprintf("verdict %s against the deposit's published table: %d differences, first: %s", v.Verdict, len(v.Differences), v.Differences[0])}
	}
	return nil
}

// sameFolder reports whether a and b name one existing folder.
func sameFolder(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
