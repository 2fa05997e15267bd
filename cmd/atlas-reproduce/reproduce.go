package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/fetch"
	"github.com/atlas-reproduce/atlas-reproduce/runner"
)

func init() {
	register(command{
		name:    "reproduce",
		summary: "fetch the Zenodo snapshot, verify it, run the census and print report.md",
		run:     runReproduce,
	})
}

func runReproduce(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "reproduce", "reproduce --dest DIR --out DIR [--record ID]... [flags]\n\n"+
		"Downloads the census snapshot records into DIR (resuming, MD5-checked, held to\n"+
		"the published pins), runs the census over them with every SHA-256 verified, writes\n"+
		"the outputs to the --out folder and prints report.md.")
	dest := fs.String("dest", "", "download into `DIR` (required; files already there and verified are not fetched again)")
	out := fs.String("out", "", "output `DIR` (required)")
	var records recordList
	fs.Var(&records, "record", "Zenodo record `ID` to fetch instead of the snapshot records; repeatable")
	baseURL := fs.String("base-url", fetch.DefaultBaseURL, "Zenodo instance `URL`")
	timeout := fs.Duration("timeout", fetch.DefaultTimeout, "abandon and retry a download attempt after this long without data (0: wait forever)")
	retries := fs.Int("retries", fetch.DefaultRetries, "download retries after a connection error, stall, 429 or 5xx (0: none)")
	var rf runFlags
	rf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case *dest == "" || *out == "":
		return usageError{"reproduce needs --dest DIR and --out DIR"}
	case *retries < 0 || *timeout < 0:
		return usageError{"--retries and --timeout must not be negative"}
	}
	opt, err := rf.options(env, *dest, *out)
	if err != nil {
		return err
	}
	rep := &fetchReporter{w: env.stderr, bars: rf.progress && env.stderrIsTerminal}
	fo := fetch.Options{Dest: *dest, Records: records, BaseURL: *baseURL, Retries: *retries, Timeout: *timeout, Progress: rep, Logf: rep.logf}
	if *retries == 0 {
		fo.Retries = -1
	}
	if *timeout == 0 {
		fo.Timeout = -1
	}
	_, err = fetch.Download(ctx, fo)
	rep.close()
	if err != nil {
		return err
	}
	r, err := runner.Run(ctx, opt)
	if err != nil {
		return err
	}
	if err := copyFile(env.stdout, filepath.Join(*out, "report.md")); err != nil {
		return err
	}
	if r.Verdict != "REPRODUCED" {
		fmt.Fprintf(env.stderr, "atlas-reproduce reproduce: verdict %s: %s\n", r.Verdict, strings.Join(r.Differences, "; "))
	}
	return nil
}
