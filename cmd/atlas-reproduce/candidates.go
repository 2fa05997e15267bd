package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// registryFlags are the registry options candidates and crawl share.
type registryFlags struct {
	url          string
	updatedSince string
	timeout      time.Duration
	maxPages     int
	// allowPrivate is crawl's --allow-private, or candidates' own.
	allowPrivate bool
}

func (f *registryFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "registry", "", "MCP Registry base `URL` (e.g. https://registry.modelcontextprotocol.io); its /v0.1/servers list is read to the last page")
	fs.StringVar(&f.updatedSince, "updated-since", "", "only servers updated since this RFC 3339 `time` (the API's updated_since)")
	fs.DurationVar(&f.timeout, "registry-timeout", crawl.DefaultRegistryTimeout, "deadline of each request to the registry")
	fs.IntVar(&f.maxPages, "registry-pages", crawl.DefaultRegistryPages, "most pages read from the registry")
}

func (f *registryFlags) options() (crawl.RegistryOptions, error) {
	if f.timeout <= 0 || f.maxPages <= 0 {
		return crawl.RegistryOptions{}, usageError{"--registry-timeout and --registry-pages must be positive"}
	}
	if f.updatedSince != "" {
		if _, err := time.Parse(time.RFC3339, f.updatedSince); err != nil {
			return crawl.RegistryOptions{}, usageError{fmt.Sprintf("--updated-since %q: want an RFC 3339 time such as 2026-01-01T00:00:00Z", f.updatedSince)}
		}
	}
	return crawl.RegistryOptions{URL: f.url, UpdatedSince: f.updatedSince, Timeout: f.timeout, MaxPages: f.maxPages, AllowPrivate: f.allowPrivate}, nil
}

// streamRegistry reads the registry opt names, calling emit per
// candidate, and says on w what was kept and skipped.
func streamRegistry(ctx context.Context, w io.Writer, opt crawl.RegistryOptions, emit func(crawl.Candidate) error) error {
	st, err := crawl.StreamRegistry(ctx, opt, emit)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "registry: %d pages, %d entries, %d names, %d remotes, %d packages: %d candidates\n", st.Pages, st.Entries, st.Names, st.Remotes, st.Packages, st.Kept)
	if st.Invalid > 0 {
		fmt.Fprintf(w, "registry: %d packages name nothing that can be fetched; each is a candidate its crawl records as install with the reason\n", st.Invalid)
	}
	reasons := make([]string, 0, len(st.Skipped))
	for r := range st.Skipped {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "registry: skipped %d: %s\n", st.Skipped[r], r)
	}
	return nil
}

// candidatesOptions is what candidates' flags say.
type candidatesOptions struct {
	out      string // the candidates file
	registry crawl.RegistryOptions
}

var runCandidates = parsed(parseCandidates, candidatesRun)

// parseCandidates parses candidates' command line.
func parseCandidates(env *cmdEnv, args []string) (candidatesOptions, error) {
	fs := newFlagSet(env, "candidates", synopsis("candidates"))
	out := fs.String("out", "", "candidates `FILE` to write (JSON Lines in the layout of "+release.CandidatesFile+"); written whole or not at all")
	var rf registryFlags
	rf.register(fs)
	fs.BoolVar(&rf.allowPrivate, "allow-private", false, "let the registry redirect to another host or port at a loopback, private or other special-purpose address (refused by default)")
	if err := parseFlags(fs, args); err != nil {
		return candidatesOptions{}, err
	}
	if rf.url == "" || *out == "" || fs.NArg() > 0 {
		return candidatesOptions{}, usageError{"candidates needs --registry URL and --out FILE, and no other arguments"}
	}
	opt, err := rf.options()
	if err != nil {
		return candidatesOptions{}, err
	}
	return candidatesOptions{out: *out, registry: opt}, nil
}

// candidatesRun reads the registry into the candidates file.
func candidatesRun(ctx context.Context, env *cmdEnv, o candidatesOptions) error {
	// Written a candidate at a time: memory holds a page of the
	// registry, not the list.
	cf, err := crawl.CreateCandidates(o.out)
	if err != nil {
		return err
	}
	defer cf.Abort()
	if err := streamRegistry(ctx, env.stderr, o.registry, cf.Write); err != nil {
		return err
	}
	if cf.Len() == 0 {
		return fmt.Errorf("candidates: the registry lists no crawlable remote or package; %s not written", o.out)
	}
	return cf.Commit()
}
