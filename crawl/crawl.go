package crawl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/defaults"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// Defaults of Options. A crawl of remote servers is bound by their
// latency, not by the CPU (about 1.5 ms of CPU a server): on a fleet of
// loopback servers with heavy-tailed latency, 128 probes at once gave 1.4
// times the servers per second of 32, for 14 MB more peak RSS and no more
// CPU a server (BENCH.md, "Crawl throughput"); the per-host bound keeps
// any one host at 2, and the memory budget bounds the answers held.
const (
	DefaultConcurrency = 128
	DefaultPerHost     = 2
)

// Options configure a crawl.
type Options struct {
	// Candidates is the candidates list (see ReadCandidates), unless
	// CandidateList is given.
	Candidates string
	// CandidateList, when not nil, are the candidates, read elsewhere
	// (from a registry, say); Source then says where from.
	CandidateList []Candidate
	Source        release.Source
	// Out is the output folder; it holds the journal while the crawl runs.
	Out string
	// Concurrency bounds the probes in flight; PerHost bounds them per
	// host and port.
	Concurrency, PerHost int
	// Probe bounds each server.
	Probe probe.Options
	// Packages configure the install and sandboxed run of packaged
	// servers (see runners.Options).
	Packages runners.Options
	// AllowPrivate connects to every address (Probe.AllowAddr = AnyAddr)
	// and says so in release.json.
	AllowPrivate bool
	// MaxMemory bounds the response bytes of all probes in flight
	// together (see Budget); 0 means DefaultMaxMemory.
	MaxMemory int64
	// OmitElapsed leaves elapsed_ms out of servers.jsonl.gz, so that the
	// output's bytes depend only on what the servers answered.
	OmitElapsed bool
	// Fresh discards the journal of an earlier run in Out and starts
	// over. Without it, a crawl resumes the journal, and refuses to when
	// the journal was begun with other options or candidates.
	Fresh bool
	// Progress, when not nil, is told the servers finished (Done) of the
	// total, the unreachable ones among them as Failed, each time a server
	// is finished (the resumed ones first), from one goroutine.
	Progress progress.Func
	// Logger receives the one-line summary; nil discards it.
	Logger *slog.Logger
	// NoPackages leaves the packaged servers of the candidates out, on
	// purpose: only remotes are crawled, and the release lists no
	// package candidate.
	NoPackages bool
	// Shard, when its Count is set, crawls only the servers of that shard
	// (see ShardOf) into a partial release that Merge combines with the
	// others.
	Shard Shard
}

// Summary counts what a crawl did.
type Summary struct {
	// Candidates is the number of candidate lines; Servers the distinct
	// server_ids among them.
	Candidates, Servers int
	// Resumed were finished in the journal already; Probed were probed now.
	Resumed, Probed int
	// Reachable and Unreachable count the servers; Tools the tools kept.
	Reachable, Unreachable, Tools int
	// UnreachableByKind counts the unreachable servers by error_kind.
	UnreachableByKind map[string]int
	// MemoryPeak is the most response bytes the probes held at once.
	MemoryPeak int64
	// ByProtocol counts the servers that named a protocol version, by
	// version and generation.
	ByProtocol map[ProtocolKey]int
	// ByPackageType counts the servers by type and outcome.
	ByPackageType map[PackageTypeKey]int
	// PackagesLeftOut counts the package candidates NoPackages left out.
	PackagesLeftOut int
	// ReusedRecords counts the packaged servers whose record was taken
	// from an earlier run (runners.Options.ReuseRecords).
	ReusedRecords int
}

// ProtocolKey is a protocol version and the generation it was negotiated
// in.
type ProtocolKey struct{ Version, Generation string }

// target is one distinct server of the candidates list.
type target struct {
	id     string
	url    string   // as the list gives it
	u      *url.URL // nil when the URL is refused
	urlErr error
	pkg    *runners.Package // a packaged server; id is its coordinate
}

func targets(cands []Candidate) []target {
	seen := map[string]bool{}
	var ts []target
	for _, c := range cands {
		if c.Package != nil {
			if id := targetID(&c); !seen[id] {
				seen[id] = true
				ts = append(ts, target{id: id, pkg: c.Package})
			}
			continue
		}
		id, u, err := probe.Normalise(c.URL)
		if err != nil {
			id = c.URL
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		ts = append(ts, target{id: id, url: c.URL, u: u, urlErr: err})
	}
	return ts
}

// Run crawls the candidates into opt.Out. Finished candidates are journalled
// as they finish; a rerun with the same Out probes only the others. The
// final files are written, in candidate order, only once every candidate
// is finished; until then, and on any error or cancellation, none exists
// under its final name.
func Run(ctx context.Context, opt Options) (*Summary, error) {
	start := time.Now()
	defaults.Set(&opt.Concurrency, DefaultConcurrency)
	defaults.Set(&opt.PerHost, DefaultPerHost)
	defaults.Set(&opt.MaxMemory, probe.DefaultMaxMemory)
	defaults.Set(&opt.Packages.Concurrency, runners.DefaultPackageConcurrency)
	if opt.AllowPrivate && opt.Probe.AllowAddr == nil {
		opt.Probe.AllowAddr = probe.AnyAddr
	}
	opt.Probe.Defaults()
	opt.Probe.Budget = probe.NewBudget(opt.MaxMemory, opt.Probe.MaxBytes+1)
	cands, src, err := opt.candidates()
	if err != nil {
		return nil, err
	}
	leftOut := 0
	if opt.NoPackages {
		cands, leftOut = withoutPackages(cands)
	}
	ts := shardTargets(targets(cands), opt.Shard)
	if !hasPackages(ts) {
		// release.json names the packages' concurrency only where
		// packages were crawled.
		opt.Packages.Concurrency = 0
	}
	// The set's lock is the crawl's: a second crawl on the same folder
	// would corrupt the journal, so it stops at once, naming this one.
	set, err := outset.Open(opt.Out)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	jname := filepath.Join(opt.Out, JournalFile)
	if opt.Fresh {
		if err := os.Remove(jname); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	j, err := openJournal(jname)
	if err != nil {
		return nil, err
	}
	defer j.close()
	began, err := resumeHeader(j, opt, start, src)
	if err != nil {
		return nil, err
	}

	sum := &Summary{Candidates: len(cands), Servers: len(ts), PackagesLeftOut: leftOut}
	var todo, pkgTodo []int
	for i, t := range ts {
		if _, ok := j.done[t.id]; ok {
			sum.Resumed++
		} else if t.pkg != nil {
			pkgTodo = append(pkgTodo, i)
		} else if t.u != nil {
			todo = append(todo, i)
		}
	}
	// A package that would run without a sandbox stops the crawl here,
	// before anything is probed.
	pr, err := preparePackages(ctx, &opt, ts, pkgTodo)
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	b := &tally{fn: opt.Progress, total: len(ts)}
	for _, t := range ts {
		if s, ok := j.done[t.id]; ok {
			b.add(s.reachable)
		}
	}
	err = probeAll(ctx, opt, ts, todo, j, sum, b)
	if err == nil {
		err = probePackages(ctx, opt, pr, ts, pkgTodo, j, sum, b)
	}
	if err != nil {
		return nil, err
	}
	sum.MemoryPeak = opt.Probe.Budget.Peak()
	sum.ReusedRecords = int(pr.Reused())
	rel := opt.release(began, src, sum)
	if opt.Shard.Count > 0 {
		rel.Shard = &release.Shard{Index: opt.Shard.Index, Count: opt.Shard.Count, CandidatesSHA256: candidatesSHA256(cands), Servers: len(ts)}
	}
	if err := writeRelease(ctx, opt, set, cands, ts, j, sum, rel); err != nil {
		return nil, err
	}
	log := defaults.Logger(opt.Logger)
	log.Info("crawl: finished", "candidates", sum.Candidates, "servers", sum.Servers, "resumed", sum.Resumed, "probed", sum.Probed,
		"reachable", sum.Reachable, "unreachable", sum.Unreachable, byKind(sum.UnreachableByKind), "tools", sum.Tools,
		"elapsed", time.Since(start).Round(100*time.Millisecond), "out", opt.Out)
	if b, c := pr.Traffic(); c > 0 {
		// Never in the release: a warm crawl fetches less, and its
		// records are the same.
		log.Info("crawl: package registries", "fetched_bytes", b, "connections", c, "npm_tarballs", pr.NPMTarballs())
	}
	if opt.Packages.ReuseRecords && len(pkgTodo) > 0 {
		log.Info("crawl: packaged servers' records reused (--reuse-package-records)", "reused", sum.ReusedRecords, "of", len(pkgTodo))
	}
	if leftOut > 0 {
		log.Info("crawl: package candidates left out (--no-packages)", "packages", leftOut)
	}
	if msg := allBlocked(ts, j); msg != "" {
		log.Info(msg)
	}
	return sum, nil
}

// resumeHeader checks the journal's header against this run and returns
// the start of the crawl its probes belong to: a new journal gets this
// run's header; one begun with other options or candidates is refused,
// since release.json could not say under which its probes were made.
func resumeHeader(j *journal, opt Options, start time.Time, src release.Source) (time.Time, error) {
	h := &runHeader{Started: start.UTC().Format(time.RFC3339), Options: opt.releaseOptions(), Candidates: src}
	switch {
	case j.header == nil && len(j.done) == 0:
		return start, j.writeHeader(h)
	case j.header == nil:
		// A journal from before headers: its options are not known.
		return start, nil
	case len(j.done) == 0:
		// A start that failed before probing anything never blocks a
		// rerun: the journal begins again under this run's header.
		return start, j.restart(h)
	}
	if d := h.differs(j.header); d != "" {
		return start, fmt.Errorf("crawl: %s holds %d servers probed since %s with other flags (%s); rerun with the same flags to resume it, or add --fresh to start over",
			j.name, len(j.done), j.header.Started, d)
	}
	t, err := time.Parse(time.RFC3339, j.header.Started)
	if err != nil {
		return start, fmt.Errorf("%s: started %q: %w", j.name, j.header.Started, err)
	}
	return t, nil
}

// withoutPackages are the candidates that name no package, and the
// number left out.
func withoutPackages(cands []Candidate) ([]Candidate, int) {
	out := make([]Candidate, 0, len(cands))
	for _, c := range cands {
		if c.Package == nil {
			out = append(out, c)
		}
	}
	return out, len(cands) - len(out)
}

// restart empties a journal that holds a header and no probe, and writes
// h in its place.
func (j *journal) restart(h *runHeader) error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if _, err := j.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	j.header, j.end = nil, 0
	return j.writeHeader(h)
}

// byKind is the summary's count of unreachable servers by error kind, most
// first (unreachable_by_kind.connect=2 unreachable_by_kind.timeout=1), so
// that the summary says why servers were unreachable without a look into
// servers.jsonl.gz.
func byKind(counts map[string]int) slog.Attr {
	kinds := slices.Collect(maps.Keys(counts))
	slices.SortFunc(kinds, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	attrs := make([]any, 0, len(kinds))
	for _, k := range kinds {
		attrs = append(attrs, slog.Int(cmp.Or(k, "unknown"), counts[k]))
	}
	return slog.Group("unreachable_by_kind", attrs...)
}

// allBlocked says so when the address policy refused every server of the
// crawl ("" otherwise): the release is then empty, and its servers.jsonl
// alone would leave the user to find out why.
func allBlocked(ts []target, j *journal) string {
	blocked := 0
	for _, t := range ts {
		s, ok := j.done[t.id]
		if !ok || s.reachable {
			return ""
		}
		e, err := j.read(s)
		if err != nil || e.Server.ErrorKind != probe.KindBlocked {
			return ""
		}
		blocked++
	}
	if blocked == 0 {
		return ""
	}
	return fmt.Sprintf("crawl: all %d servers were refused by the address policy (loopback, private or other special-purpose addresses); rerun with --allow-private --fresh to crawl them", blocked)
}

// scheduler hands out the targets of todo to the workers, in candidate
// order as far as the per-host limit allows: a host with more candidates
// than the pool has workers must not hold every worker waiting on it while
// other hosts' candidates wait behind.
type scheduler struct {
	perHost int
	queues  map[string][]int // host -> pending targets
	hosts   []string         // hosts in order of first candidate
	start   int              // hosts[:start] are drained
	active  map[string]int
}

func newScheduler(ts []target, todo []int, perHost int) *scheduler {
	s := &scheduler{perHost: perHost, queues: map[string][]int{}, active: map[string]int{}}
	for _, i := range todo {
		h := ts[i].u.Host
		if _, ok := s.queues[h]; !ok {
			s.hosts = append(s.hosts, h)
		}
		s.queues[h] = append(s.queues[h], i)
	}
	return s
}

// next is the first pending target whose host has room, or -1. Hosts are
// drained roughly in list order, so skipping the drained prefix keeps a
// step near the number of busy hosts, not of all hosts.
func (s *scheduler) next() (int, string) {
	for s.start < len(s.hosts) && len(s.queues[s.hosts[s.start]]) == 0 {
		s.start++
	}
	for _, h := range s.hosts[s.start:] {
		if q := s.queues[h]; len(q) > 0 && s.active[h] < s.perHost {
			return q[0], h
		}
	}
	return -1, ""
}

// run sends work until every target is handed out and finished, or ctx
// ends; done receives the host of each finished probe.
func (s *scheduler) run(ctx context.Context, work chan<- int, done <-chan string) {
	defer close(work)
	inflight := 0
	for {
		i, h := s.next()
		if i < 0 && inflight == 0 {
			return
		}
		var out chan<- int
		if i >= 0 {
			out = work
		}
		select {
		case out <- i:
			s.queues[h] = s.queues[h][1:]
			s.active[h]++
			inflight++
		case fh := <-done:
			s.active[fh]--
			inflight--
		case <-ctx.Done():
			return
		}
	}
}

// probeAll probes the targets of todo on a bounded pool and journals each
// result as it arrives. A probe cut short by ctx is not journalled: its
// server was not found unreachable, the crawl was stopped.
func probeAll(ctx context.Context, opt Options, ts []target, todo []int, j *journal, sum *Summary, pb *tally) error {
	if len(todo) == 0 {
		return nil
	}
	p := probe.NewProber(opt.Probe)
	defer p.Close()

	g, gctx := errgroup.WithContext(ctx)
	// The journal's failure stops the probes at once, while the journal
	// goroutine still drains what is in flight.
	gctx, stopProbes := context.WithCancelCause(gctx)
	defer stopProbes(nil)
	work := make(chan int)
	// One slot per worker: a worker's report never blocks, even after
	// the scheduler has stopped.
	done := make(chan string, opt.Concurrency)
	results := make(chan probed, opt.Concurrency)
	sched := newScheduler(ts, todo, opt.PerHost)
	g.Go(func() error { sched.run(gctx, work, done); return nil })
	var workers sync.WaitGroup
	for range opt.Concurrency {
		workers.Add(1)
		g.Go(func() error {
			defer workers.Done()
			for i := range work {
				t := &ts[i]
				r := p.Probe(gctx, t.u)
				done <- t.u.Host
				if !sendProbed(gctx, results, t, &r) {
					return nil
				}
			}
			return nil
		})
	}
	go func() { workers.Wait(); close(results) }()
	g.Go(func() error { return journalProbed(results, j, sum, pb, stopProbes) })
	err := g.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// probed is a finished probe on its way to the journal.
type probed struct {
	e *entry
	r *probe.Result
}

// sendProbed hands the finished probe r of t to the journal writer, or
// releases it and reports false when ctx ends first: a probe cut short
// is not journalled.
func sendProbed(ctx context.Context, results chan<- probed, t *target, r *probe.Result) bool {
	if ctx.Err() != nil {
		r.Release()
		return false
	}
	select {
	case results <- probed{newEntry(t, r), r}:
		return true
	case <-ctx.Done():
		r.Release()
		return false
	}
}

// journalProbed appends each finished probe to the journal and counts it;
// its first failure stops the probes through stop.
func journalProbed(results <-chan probed, j *journal, sum *Summary, pb *tally, stop context.CancelCauseFunc) error {
	var err error
	for pr := range results {
		// The bytes stay charged until they are on disk; after an
		// error the rest are drained, so no worker waits.
		if err == nil {
			if err = j.append(pr.e); err != nil {
				stop(err)
			}
		}
		pr.r.Release()
		if err == nil {
			sum.Probed++
			pb.add(pr.e.Server.Reachable)
		}
	}
	return err
}

func newEntry(t *target, r *probe.Result) *entry {
	ms := r.Elapsed.Milliseconds()
	e := &entry{Server: ServerRecord{
		ServerID: t.id, URL: t.url, Reachable: r.Reachable, ElapsedMS: &ms,
	}}
	if t.pkg != nil {
		e.Server.Package = t.id
		e.Server.Runner = r.Runner
	}
	e.Server.SupportedVersions = r.SupportedVersions
	if r.Initialized || r.ProtocolVersion != "" {
		// A handshake that failed after initialize was answered keeps
		// what the answer said.
		e.Server.Transport, e.Server.ProtocolVersion, e.Server.Generation = r.Transport, r.ProtocolVersion, r.Generation
		e.Server.ServerInfo, e.Server.Capabilities, e.Server.Instructions = r.ServerInfo, r.Capabilities, r.Instructions
	}
	if r.Initialized {
		tc := r.ToolsCapability
		e.Server.ToolsCapability = &tc
		e.Server.ToolsTTLMs, e.Server.ToolsCacheScope = r.ToolsTTLMs, r.ToolsCacheScope
	}
	e.Server.StdoutSkippedLines = r.SkippedLines
	if r.Reachable {
		e.Server.ToolCount = len(r.Tools)
		e.Tools = r.Tools
		if e.Tools == nil {
			e.Tools = []json.RawMessage{}
		}
	} else {
		e.Server.ErrorKind, e.Server.Error, e.Server.ResourceMetadata = r.ErrorKind, r.Error, r.ResourceMetadata
		e.Server.FailedStep, e.Server.RPCError = r.FailedStep, r.RPCError
	}
	return e
}

// tally counts the finished servers for Options.Progress.
type tally struct {
	fn                            progress.Func
	reachable, unreachable, total int
}

func (b *tally) add(reachable bool) {
	if reachable {
		b.reachable++
	} else {
		b.unreachable++
	}
	b.fn.Tell(progress.Report{Task: "crawl", Done: int64(b.reachable + b.unreachable), Total: int64(b.total), Failed: int64(b.unreachable)})
}

// writeRelease is the ordered writer: the final files from the journal, in
// candidate order, committed as one set: a crash at any instant leaves the
// previous release or this one, never a mix. On error the caller's Close of
// the set removes the temporaries.
func writeRelease(ctx context.Context, opt Options, set *outset.Set, cands []Candidate, ts []target, j *journal, sum *Summary, rel *release.Release) error {
	files, err := release.CreateSnapshot(set, release.Compression{Gzip: true})
	if err != nil {
		return err
	}
	toolsW, serversW, candW := files[0], files[1], files[2]

	var line []byte
	var rec bytes.Buffer
	enc := json.NewEncoder(&rec)
	enc.SetEscapeHTML(false)
	for i := range ts {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		t := &ts[i]
		var e *entry
		if s, ok := j.done[t.id]; ok {
			var err error
			if e, err = j.read(s); err != nil {
				return err
			}
		} else if t.urlErr != nil {
			e = &entry{Server: ServerRecord{ServerID: t.id, URL: t.url, ErrorKind: probe.KindURL, Error: t.urlErr.Error()}}
		} else {
			return fmt.Errorf("crawl: %s was not probed", t.id)
		}
		if opt.OmitElapsed {
			e.Server.ElapsedMS = nil
		}
		rec.Reset()
		if err := enc.Encode(&e.Server); err != nil {
			return err
		}
		if _, err := serversW.Write(rec.Bytes()); err != nil {
			return err
		}
		if v := e.Server.ProtocolVersion; v != "" {
			if sum.ByProtocol == nil {
				sum.ByProtocol = map[ProtocolKey]int{}
			}
			sum.ByProtocol[ProtocolKey{v, e.Server.Generation}]++
		}
		if sum.ByPackageType == nil {
			sum.ByPackageType = map[PackageTypeKey]int{}
		}
		sum.ByPackageType[packageTypeKey(t, &e.Server)]++
		if e.Server.Reachable {
			sum.Reachable++
			sum.Tools += len(e.Tools)
			line = probe.AppendToolsRecord(line[:0], t.id, e.Tools)
			if _, err := toolsW.Write(line); err != nil {
				return err
			}
		} else {
			sum.Unreachable++
			if sum.UnreachableByKind == nil {
				sum.UnreachableByKind = map[string]int{}
			}
			sum.UnreachableByKind[e.Server.ErrorKind]++
		}
	}
	for _, c := range cands {
		if _, err := candW.Write(append(c.Record, '\n')); err != nil {
			return err
		}
	}
	if err := writeReleaseJSON(set, rel, sum, &files); err != nil {
		return err
	}
	sums := map[string]string{}
	for _, f := range files {
		h, err := f.Finish()
		if err != nil {
			return err
		}
		sums[f.Name()] = h
	}
	if err := release.WriteSums(set, sums); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if err := set.Commit(); err != nil {
		return errors.Join(err, errors.New("crawl: the release is incomplete; rerun with the same --out to complete it"))
	}
	return nil
}

// writeReleaseJSON adds release.json, with the final counts, to the files
// of the release.
func writeReleaseJSON(set *outset.Set, rel *release.Release, sum *Summary, files *[]*release.Writer) error {
	rel.Finished = time.Now().UTC().Format(time.RFC3339)
	rel.Counts.Reachable, rel.Counts.Unreachable, rel.Counts.Tools = sum.Reachable, sum.Unreachable, sum.Tools
	if sum.UnreachableByKind != nil {
		rel.Counts.UnreachableByKind = sum.UnreachableByKind
	}
	rel.Counts.ByProtocol = protocolCounts(sum.ByProtocol)
	rel.Counts.ByPackageType = packageTypeCounts(sum.ByPackageType)
	rf, err := release.Create(set, release.File, release.Compression{})
	if err != nil {
		return err
	}
	*files = append(*files, rf)
	enc := json.NewEncoder(rf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rel)
}
