package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/fetch"
)

// fetchFlags are the download flags fetch and reproduce share, with one
// validation for both.
type fetchFlags struct {
	dest    string
	records listFlag
	baseURL string
	timeout time.Duration
	retries int
}

func (f *fetchFlags) register(fs *flag.FlagSet, destUsage string) {
	fs.StringVar(&f.dest, "dest", "", destUsage)
	fs.Var(&f.records, "record", "Zenodo record `ID` (or DOI, or record URL; a concept record means its newest version) to fetch; repeatable, or comma-separated (default: the pinned snapshot records "+strings.Join(fetch.SnapshotRecordIDs(), " and ")+")")
	fs.StringVar(&f.baseURL, "base-url", fetch.DefaultBaseURL, "Zenodo instance `URL`")
	fs.DurationVar(&f.timeout, "timeout", fetch.DefaultTimeout, "abandon and retry a download attempt after this long without data from the server (0: wait forever)")
	fs.IntVar(&f.retries, "retries", fetch.DefaultRetries, "download retries after a connection error, stall, 429 or 5xx (0: none)")
}

// options checks the flags and returns the download's options, reporting
// to rep and logging to log.
func (f *fetchFlags) options(rep *fetchReporter, log *slog.Logger) (fetch.Options, error) {
	switch {
	case f.dest == "":
		return fetch.Options{}, usageError{"--dest is required"}
	case f.retries < 0:
		return fetch.Options{}, usageError{"--retries must not be negative"}
	case f.timeout < 0:
		return fetch.Options{}, usageError{"--timeout must not be negative"}
	}
	for _, r := range f.records {
		if _, err := fetch.ParseRecordID(r); err != nil {
			return fetch.Options{}, usageError{err.Error()}
		}
	}
	opts := fetch.Options{
		Dest:    f.dest,
		Records: f.records,
		BaseURL: f.baseURL,
		Retries: f.retries,
		Timeout: f.timeout,
		// The package reads zero as "default", as every options struct
		// does; on the command line 0 means none.
		NoRetries: f.retries == 0,
		NoTimeout: f.timeout == 0,
		Progress:  rep.tell,
		Logger:    log,
	}
	return opts, nil
}

// fetchOptions is what fetch's flags say.
type fetchOptions struct {
	flags    fetchFlags
	progress bool // draw a bar per file when stderr is a terminal
}

var runFetch = parsed(parseFetch, fetchRun)

// parseFetch parses fetch's command line.
func parseFetch(env *cmdEnv, args []string) (fetchOptions, error) {
	fs := newFlagSet(env, "fetch", synopsis("fetch"))
	var o fetchOptions
	o.flags.register(fs, "download into `DIR` (required)")
	fs.BoolVar(&o.progress, "progress", true, "draw a progress bar per file when stderr is a terminal")
	return o, parseFlagsOnly(fs, args)
}

// fetchRun downloads the records o names and prints each verified path.
func fetchRun(ctx context.Context, env *cmdEnv, o fetchOptions) error {
	rep := newFetchReporter(env, o.progress)
	opts, err := o.flags.options(rep, env.logger(slog.LevelInfo))
	if err != nil {
		rep.close()
		return err
	}
	results, err := fetch.Download(ctx, opts)
	rep.close()
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintln(env.stdout, r.Path)
	}
	return nil
}
