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

// depositInputs recognises a deposit made by publish in data when the
// run is left to choose its hashes: it verifies every file of the deposit
// against its SHA256SUMS and has the run held to that manifest. It
// returns nil for data that is no deposit. With tableOnly (run), a
// release without a published table is left to run's usual rules.
func depositInputs(data string, opt *pipeline.Options, rf *runFlags, tableOnly bool) (*publish.Deposit, error) {
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
	if err := dep.Verify(); err != nil {
		return nil, err
	}
	opt.Manifest, opt.ManifestName = dep.Sums, "the deposit's "+publish.SumsFile
	return dep, nil
}

// holdToDeposit holds the run to the deposit's published table, writes
// the verdict to w and into the run's output folder out, and returns an
// error unless it is REPRODUCED.
func holdToDeposit(w io.Writer, dep *publish.Deposit, r *report.Report, out string) error {
	v, err := dep.Hold(r)
	if err != nil {
		return err
	}
	if err := dep.WriteVerdict(out, v); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n## Held to the deposit's published table\n\n")
	if v.Verdict == "" {
		fmt.Fprintf(w, "A release with no published counts: its files verify against its %s, but it publishes no %s to hold the run to.\n", publish.SumsFile, publish.ReportFile)
		return fmt.Errorf("a release with no published counts: nothing to reproduce")
	}
	fmt.Fprintf(w, "**%s**: the run's counts beside the deposit's %s and %s.\n", v.Verdict, publish.ReportFile, publish.ClassesFile)
	for _, d := range v.Differences {
		fmt.Fprintf(w, "- %s\n", d)
	}
	if v.Verdict != report.VerdictReproduced {
		return fmt.Errorf("verdict %s against the deposit's published table: %d differences, first: %s", v.Verdict, len(v.Differences), v.Differences[0])
	}
	return nil
}
