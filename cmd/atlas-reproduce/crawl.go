package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// probeFlags are the per-server bounds crawl and scan share.
type probeFlags struct {
	timeout  time.Duration
	maxTools int
	maxBytes int64
	maxPages int
}

func (f *probeFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.timeout, "timeout", probe.DefaultTimeout, "deadline of the whole exchange with one server (connect, initialize, every page)")
	fs.IntVar(&f.maxTools, "max-tools", probe.DefaultMaxTools, "most tools kept from one server; more makes it unreachable")
	fs.Int64Var(&f.maxBytes, "max-bytes", probe.DefaultMaxBytes, "most response bytes read from one server")
	fs.IntVar(&f.maxPages, "max-pages", probe.DefaultMaxPages, "most tools/list pages requested from one server")
}

func (f *probeFlags) options() (probe.Options, error) {
	if f.timeout <= 0 || f.maxTools <= 0 || f.maxBytes <= 0 || f.maxPages <= 0 {
		return probe.Options{}, usageError{"--timeout, --max-tools, --max-bytes and --max-pages must be positive"}
	}
	return probe.Options{Timeout: f.timeout, MaxTools: f.maxTools, MaxBytes: f.maxBytes, MaxPages: f.maxPages}, nil
}

// crawlOptions is what crawl's flags say: crawl.Options without what the
// run supplies (logger, progress, the registry's list), and the registry
// to read when the candidates come from one.
type crawlOptions struct {
	opt crawl.Options
	// registry is the registry to read; nil when opt.Candidates names a file.
	registry *crawl.RegistryOptions
	// progress draws a bar when stderr is a terminal.
	progress bool
}

var runCrawl = parsed(parseCrawl, crawlRun)

// parseCrawl parses crawl's command line.
func parseCrawl(env *cmdEnv, args []string) (crawlOptions, error) {
	fs := newFlagSet(env, "crawl", synopsis("crawl"))
	cands := fs.String("candidates", "", "candidates `FILE`: JSON Lines with a \"url\" or a \"package\" (the layout of "+release.CandidatesFile+"), or one URL or package coordinate (npm:NAME@VERSION) per line")
	out := fs.String("out", "", "output `DIR`; it keeps the journal, and a rerun with the same DIR and flags resumes")
	fresh := fs.Bool("fresh", false, "discard the journal in --out and crawl every server again (a journal begun with other flags is not resumed)")
	conc := fs.Int("concurrency", crawl.DefaultConcurrency, "servers probed at once")
	perHost := fs.Int("per-host", crawl.DefaultPerHost, "servers probed at once on one host and port")
	noElapsed := fs.Bool("no-elapsed", false, "leave elapsed_ms out of "+release.ServersFile+", so that the bytes depend only on the answers")
	progress := fs.Bool("progress", true, "draw a progress bar when stderr is a terminal")
	allowPrivate := fs.Bool("allow-private", false, "also connect to loopback, private, link-local and every other special-purpose address (refused by default: a public candidate list must not reach into the crawling machine's network)")
	maxMemory := fs.Int64("max-memory", probe.DefaultMaxMemory, "most response bytes held by all servers in flight together; more waits (the Go heap's soft limit is set to 4 times this unless GOMEMLIMIT is set)")
	noPackages := fs.Bool("no-packages", false, "leave the packaged servers of the candidates out, on purpose: crawl the remotes only")
	shard := fs.String("shard", "", "crawl only shard `K/N` (K from 0) of the servers, chosen by the SHA-256 of each server's identity, into a partial release for merge")
	var pf probeFlags
	pf.register(fs)
	var rf registryFlags
	rf.register(fs)
	var pkf packageFlags
	pkf.register(fs, true)
	if err := parseFlags(fs, args); err != nil {
		return crawlOptions{}, err
	}
	if (*cands == "") == (rf.url == "") || *out == "" || fs.NArg() > 0 {
		return crawlOptions{}, usageError{"crawl needs one of --candidates FILE and --registry URL, --out DIR, and no other arguments"}
	}
	if *conc <= 0 || *perHost <= 0 {
		return crawlOptions{}, usageError{"--concurrency and --per-host must be positive"}
	}
	po, err := pf.options()
	if err != nil {
		return crawlOptions{}, err
	}
	if *maxMemory <= po.MaxBytes {
		return crawlOptions{}, usageError{"--max-memory must be more than --max-bytes: one server must always be able to finish"}
	}
	pko, err := pkf.options()
	if err != nil {
		return crawlOptions{}, err
	}
	var sh crawl.Shard
	if *shard != "" {
		if sh, err = crawl.ParseShard(*shard); err != nil {
			return crawlOptions{}, usageError{"--" + err.Error()}
		}
	}
	o := crawlOptions{progress: *progress, opt: crawl.Options{Candidates: *cands, Out: *out, Concurrency: *conc, PerHost: *perHost, Probe: po, Packages: pko,
		AllowPrivate: *allowPrivate, MaxMemory: *maxMemory, OmitElapsed: *noElapsed, Fresh: *fresh, NoPackages: *noPackages, Shard: sh}}
	if rf.url != "" {
		rf.allowPrivate = *allowPrivate
		ro, err := rf.options()
		if err != nil {
			return crawlOptions{}, err
		}
		o.registry = &ro
	}
	return o, nil
}

// crawlRun crawls o's candidates, read from o's registry when it names
// one, into o's release folder.
func crawlRun(ctx context.Context, env *cmdEnv, o crawlOptions) error {
	opt := o.opt
	if os.Getenv("GOMEMLIMIT") == "" {
		// The budget counts the bytes read; their copies while answers
		// are decoded are held near it by the runtime's soft limit.
		debug.SetMemoryLimit(probe.SoftLimitFactor * opt.MaxMemory)
	}
	opt.Logger = env.logger(slog.LevelInfo)
	if o.registry != nil {
		var list []crawl.Candidate
		if err := streamRegistry(ctx, env.stderr, *o.registry, func(c crawl.Candidate) error { list = append(list, c); return nil }); err != nil {
			return err
		}
		if len(list) == 0 {
			return fmt.Errorf("crawl: the registry lists no crawlable remote or package")
		}
		opt.CandidateList = list
		opt.Source = release.Source{Registry: probe.StripUserinfo(strings.TrimRight(o.registry.URL, "/")), UpdatedSince: o.registry.UpdatedSince}
	}
	opt.Progress = env.console().crawlProgress(env.drawBars(o.progress))
	_, err := crawl.Run(ctx, opt)
	env.console().end(false)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(env.stderr, "atlas-reproduce crawl: finished servers are kept in %s/%s; rerun with --out %s to resume\n",
				opt.Out, crawl.JournalFile, opt.Out)
		}
		return err
	}
	return nil
}

// packageFlags are the options of packaged servers crawl and scan share.
type packageFlags struct {
	concurrency int
	cache       string
	cacheMax    int64
	memory      int64
	metadataAge time.Duration
	reuse       bool
}

func (f *packageFlags) register(fs *flag.FlagSet, crawling bool) {
	if crawling {
		fs.IntVar(&f.concurrency, "package-concurrency", runners.DefaultPackageConcurrency, "packaged servers installed or run at once, each in its own sandbox")
		fs.BoolVar(&f.reuse, "reuse-package-records", false, "take a packaged server's record from the package cache when the same install of it ran before under the same conditions (this program, the runtime, its arguments, environment and bounds, the record options), instead of running it again, and an npm install that failed in a settled way (a missing dependency or version) instead of trying it again; timeouts always run again (docs/packages.md)")
		fs.DurationVar(&f.metadataAge, "npm-metadata-max-age", 0, "start with npm packuments that earlier crawls cached if no older than this `DURATION` (0: none; a crawl reads the registry as of its start, and fetches each packument once)")
	}
	fs.StringVar(&f.cache, "package-cache", "", "`DIR` of installed packages (default atlas-reproduce/packages in the user's cache folder)")
	fs.Int64Var(&f.cacheMax, "package-cache-max", runners.DefaultPackageCacheMax, "most bytes of installed packages kept in the cache; the least recently used go first")
	fs.Int64Var(&f.memory, "sandbox-memory", sandbox.DefaultMemory, "most memory `BYTES` of one sandbox (an install or a server): its processes' resident memory, its tmpfs folders and its memfd files together; past it the sandbox is killed and the server recorded as memory")
}

func (f *packageFlags) options() (runners.Options, error) {
	if f.concurrency < 0 || f.cacheMax <= 0 || f.memory <= 0 {
		return runners.Options{}, usageError{"--package-concurrency, --package-cache-max and --sandbox-memory must be positive"}
	}
	if f.metadataAge < 0 {
		return runners.Options{}, usageError{"--npm-metadata-max-age must not be negative"}
	}
	if floor := runners.MinSandboxMemory(runners.DefaultPackageMax); f.memory < floor {
		return runners.Options{}, usageError{fmt.Sprintf("--sandbox-memory %d: at least %d bytes (%d MiB), the size of an install's folders", f.memory, floor, floor>>20)}
	}
	return runners.Options{Concurrency: f.concurrency, Cache: f.cache, CacheMax: f.cacheMax,
		MetadataMaxAge: f.metadataAge, Limits: sandbox.Limits{Memory: f.memory}, ReuseRecords: f.reuse}, nil
}
