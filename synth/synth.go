// Package synth generates a synthetic MCP census with the file layout of the
// frozen snapshot (server_tools.jsonl.gz, servers.jsonl.gz,
// candidates_remotes.jsonl and a SHA256SUMS manifest) and its exact ground
// truth, so that the whole pipeline can be run and checked offline.
//
// Property names and descriptions come from an embedded word stock distilled
// from real tools/list answers; a small fraction of tools carry the
// malformed-but-valid JSON corners on which a decoder can disagree with
// Python's json (duplicate keys, values of the wrong type, NaN, escapes,
// lone surrogates, Unicode case traps). The ground truth, truth.json, is
// computed from the generator's model of what it wrote, not by decoding the
// files, and equals what bench/reference.py census prints for them.
//
// Output is a function of the options alone: the same bytes for the same
// seed whatever the number of CPUs.
package synth

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// Record shapes of server_tools.jsonl.gz.
const (
	// ShapeServers writes one line per server: {"server_id", "tools": [...]}.
	ShapeServers = "servers"
	// ShapeTools writes one line per tool: {"server_id", "tool": {...}},
	// with a few flat tools carrying a server id field themselves.
	ShapeTools = "tools"
)

// The files Write creates in its directory: the three of the frozen
// snapshot's layout (release.ToolsFile, release.ServersFile,
// release.CandidatesFile, in the chosen Shape), their release.SumsFile
// manifest, and the ground truth.
const (
	// TruthFile is the ground truth, in reference.py census's format.
	TruthFile = "truth.json"
)

// Census scale of the frozen snapshot, and the default seed (its date).
const (
	// DefaultTools is the snapshot's number of live tools.
	DefaultTools = 229539
	// DefaultServers is the snapshot's number of reachable servers.
	DefaultServers = 13089
	// DefaultSeed is the snapshot date.
	DefaultSeed = 20261012
)

// Options says what to generate.
type Options struct {
	// Tools and Servers are the totals; every server gets at least one
	// tool, so Tools >= Servers >= 1.
	Tools, Servers int
	// Seed selects the census; equal options give equal bytes.
	Seed uint64
	// Shape is ShapeServers or ShapeTools.
	Shape string
	// MaxServerTools, when positive, gives the census a heavy tail: the
	// largest server carries this many tools and the next ones a Pareto
	// (Zipf rank-size) share of it, as aggregator servers do. Zero keeps
	// the log-normal distribution alone, whose largest server has a few
	// hundred tools.
	MaxServerTools int
	// Dense gives each tool about four properties (twice the default's
	// mean) with descriptions cut to a few words: the property-dense
	// census on which decoding and the per-property tables cost most.
	// False keeps the default census byte for byte.
	Dense bool
	// NearMiss makes the census of the held-back census's shape: zero to
	// a few properties a tool, about half of them near-misses of the
	// rules' words in snake_case, camelCase and kebab-case, short
	// descriptions, anyOf, definitions/$defs and nested objects, every
	// tool tagged so that no two share a definition. It compresses about
	// 10:1. It implies Dense's short descriptions.
	NearMiss bool
	// Workers bounds the generating goroutines (0: GOMAXPROCS). It does
	// not change the output.
	Workers int
	// Progress, when not nil, is told from one goroutine the tools written
	// so far (Done) of Tools (Total), after every chunk.
	Progress progress.Func
}

// DefaultOptions returns the census scale, the default seed and the
// one-server-per-line shape.
func DefaultOptions() Options {
	return Options{Tools: DefaultTools, Servers: DefaultServers, Seed: DefaultSeed, Shape: ShapeServers}
}

func (o *Options) validate() error {
	switch {
	case o.Shape != ShapeServers && o.Shape != ShapeTools:
		return fmt.Errorf("synth: unknown shape %q (want %q or %q)", o.Shape, ShapeServers, ShapeTools)
	case o.Servers < 1:
		return fmt.Errorf("synth: need at least one server, got %d", o.Servers)
	case o.Tools < o.Servers:
		return fmt.Errorf("synth: %d tools cannot cover %d servers (every server has at least one tool)", o.Tools, o.Servers)
	case o.Tools > math.MaxInt32:
		return fmt.Errorf("synth: %d tools is too many", o.Tools)
	case o.MaxServerTools < 0:
		return fmt.Errorf("synth: negative MaxServerTools %d", o.MaxServerTools)
	case o.MaxServerTools > 0 && o.Tools-o.MaxServerTools < o.Servers-1:
		return fmt.Errorf("synth: a server of %d tools leaves too few of %d tools for the other %d servers", o.MaxServerTools, o.Tools, o.Servers-1)
	}
	return nil
}

const (
	// chunkServers is the unit of parallel generation. It is fixed, not
	// derived from the CPU count, because each chunk has its own random
	// stream: changing it changes the output.
	chunkServers = 128
	// gzipBlock is pgzip's block size; like chunkServers it shapes the
	// output bytes and must not depend on the machine.
	gzipBlock = 1 << 20
)

// toolCounts draws the tools-per-server distribution: log-normal weights
// (a long tail, a few servers with hundreds of tools), scaled to the total,
// capped, with the remainder spread one by one.
func toolCounts(tools, servers int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, mix(seed+0x5EED)))
	w := make([]float64, servers)
	var sum float64
	for i := range w {
		w[i] = math.Exp(1.1 * rng.NormFloat64())
		sum += w[i]
	}
	mean := float64(tools) / float64(servers)
	limit := int32(min(max(50, 20*mean), math.MaxInt32))
	extra := tools - servers
	counts := make([]int32, servers)
	left := tools
	for i := range counts {
		c := 1 + int32(float64(extra)*w[i]/sum)
		if c > limit {
			// A ragged cap: the largest servers must not pile up on one
			// value.
			c = limit - rng.Int32N(limit/4)
		}
		counts[i] = c
		left -= int(c)
	}
	for i := rng.IntN(servers); left > 0; i = (i + 1) % servers {
		if counts[i] < limit {
			counts[i]++
			left--
		}
	}
	return counts
}

// tailExponent is the rank-size exponent of the heavy tail: the k-th
// largest server has MaxServerTools·k^-1.8 tools. With MaxServerTools
// 39,000 that gives about 39,000, 11,200, 5,400 and 3,200 tools (lines of
// about 15.6, 4.5, 2.2 and 1.3 MB), the shape crawls of aggregator servers
// yield.
const tailExponent = 1.8

// heavyTail draws a tools-per-server distribution whose largest servers
// follow a Pareto tail: rank k gets maxTools·k^-tailExponent tools, for as
// long as that exceeds what the log-normal body caps a server at. The body
// (toolCounts) shares the remaining tools among the remaining servers, and
// the tail servers are placed at random positions, so that the giant lines
// are not all at the start of the file.
func heavyTail(tools, servers, maxTools int, seed uint64) []int32 {
	body := max(50, 20*tools/servers)
	var tail []int32
	left := tools
	for k := 1; k < servers; k++ {
		n := int(float64(maxTools)*math.Pow(float64(k), -tailExponent) + 0.5)
		// Every other server needs one tool at least.
		n = min(n, left-(servers-len(tail)-1))
		if n <= body && k > 1 {
			break
		}
		tail = append(tail, int32(n))
		left -= n
	}
	counts := toolCounts(left, servers-len(tail), seed)
	rng := rand.New(rand.NewPCG(seed, mix(seed+0x7A11)))
	for _, n := range tail {
		i := rng.IntN(len(counts) + 1)
		counts = append(counts, 0)
		copy(counts[i+1:], counts[i:])
		counts[i] = n
	}
	return counts
}

type chunkOut struct {
	st, sv, cand []byte
	c            counts
}

var chunkPool = sync.Pool{New: func() any { return new(chunkOut) }}

// Write generates a census into dir (created if need be) and returns its
// ground truth. Files are written under temporary names and renamed into
// place as one set only when all of them are complete; on an error or a
// cancelled ctx the temporaries are removed. A second writer on dir is refused
// (*outset.LockedError).
func Write(ctx context.Context, dir string, opt Options) (*Truth, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	set, err := outset.Open(dir)
	if err != nil {
		return nil, err
	}
	defer set.Close()
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	vocab() // parse once before the workers race for it
	perServer := toolCounts(opt.Tools, opt.Servers, opt.Seed)
	if opt.MaxServerTools > 0 {
		perServer = heavyTail(opt.Tools, opt.Servers, opt.MaxServerTools, opt.Seed)
	}

	comp := release.Compression{Gzip: true, Parallel: max(2, workers), Block: gzipBlock}
	if opt.NearMiss {
		// The held-back census was written by a sequential gzip at its
		// best level; this comes closest to its 10:1 with pgzip's
		// machine-independent blocks.
		comp.Level, comp.Block = 9, 4*gzipBlock
	}
	outs, err := release.CreateSnapshot(set, comp)
	if err != nil {
		return nil, err
	}
	cleanup := func(err error) error {
		for _, o := range outs {
			o.Abort()
		}
		return err
	}
	st, sv, cand := outs[0], outs[1], outs[2]

	total, err := generate(ctx, opt, workers, perServer, st, sv, cand)
	if err != nil {
		return nil, cleanup(err)
	}
	if total.tools != opt.Tools || total.servers != opt.Servers {
		// The generator's own invariant; a failure here is a bug.
		return nil, cleanup(fmt.Errorf("synth: generated %d tools on %d servers, want %d on %d",
			total.tools, total.servers, opt.Tools, opt.Servers))
	}
	sums := map[string]string{}
	for _, o := range outs {
		h, err := o.Finish()
		if err != nil {
			return nil, cleanup(err)
		}
		sums[o.Name()] = h
	}
	truth := total.truth()
	if err := release.WriteSums(set, sums); err != nil {
		return nil, err
	}
	if err := set.WriteFile(TruthFile, truth.MarshalPython()); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, cleanup(context.Cause(ctx))
	}
	if err := set.Commit(); err != nil {
		return nil, err
	}
	return truth, nil
}

// generate runs the chunks on the workers and writes their output in chunk
// order, so that the bytes do not depend on scheduling.
func generate(ctx context.Context, opt Options, workers int, perServer []int32, st, sv, cand io.Writer) (counts, error) {
	var total counts
	nChunks := (len(perServer) + chunkServers - 1) / chunkServers
	type job struct {
		index int
		out   chan *chunkOut
	}
	eg, ctx := errgroup.WithContext(ctx)
	jobs := make(chan job)
	// order bounds the chunks in flight: memory stays flat whatever the
	// total.
	order := make(chan chan *chunkOut, 2*workers)
	eg.Go(func() error {
		defer close(order)
		defer close(jobs)
		for i := range nChunks {
			ch := make(chan *chunkOut, 1)
			select {
			case order <- ch:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			select {
			case jobs <- job{i, ch}:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		return nil
	})
	for range workers {
		eg.Go(func() error {
			for j := range jobs {
				if ctx.Err() != nil {
					continue // drain: the dispatcher is about to stop
				}
				first := j.index * chunkServers
				last := min(first+chunkServers, len(perServer))
				out := chunkPool.Get().(*chunkOut)
				g := newGen(opt.Seed, j.index, opt.Shape)
				g.dense = opt.Dense || opt.NearMiss
				g.near = opt.NearMiss
				out.st, out.sv, out.cand, out.c = g.chunk(first, perServer[first:last], out.st[:0], out.sv[:0], out.cand[:0])
				j.out <- out
			}
			return nil
		})
	}
	eg.Go(func() error {
		for ch := range order {
			var out *chunkOut
			select {
			case out = <-ch:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			for _, w := range []struct {
				w io.Writer
				b []byte
			}{{st, out.st}, {sv, out.sv}, {cand, out.cand}} {
				if _, err := w.w.Write(w.b); err != nil {
					return err
				}
			}
			total.add(&out.c)
			chunkPool.Put(out)
			opt.Progress.Tell(progress.Report{Task: "synth", Done: int64(total.tools), Total: int64(opt.Tools)})
		}
		return nil
	})
	err := eg.Wait()
	return total, err
}
