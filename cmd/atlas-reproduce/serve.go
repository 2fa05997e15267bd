package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/reclaim"
	"github.com/atlas-reproduce/atlas-reproduce/serve"
)

// serveOptions is what serve's flags say.
type serveOptions struct {
	cfg   serve.Config // without Logger and Reclaim, which serveRun sets
	stdio bool
	// memLimit is the soft memory limit to set (0: none); memLimitGiven,
	// whether --memory-limit was given, which overrides GOMEMLIMIT.
	memLimit      int64
	memLimitGiven bool
}

// runServe serves until SIGINT or SIGTERM cancels ctx. Unlike the batch
// commands, whose interrupted work is lost, a server that drained its
// in-flight requests has finished cleanly: it returns nil, so the exit
// status is 0. Only requests cut off by the shutdown bound make it an error.
var runServe = parsed(parseServe, serveRun)

// parseServe parses serve's command line.
func parseServe(env *cmdEnv, args []string) (serveOptions, error) {
	fs := newFlagSet(env, "serve", synopsis("serve"))
	listen := fs.String("listen", serve.DefaultAddr, "`address` to listen on (port 0 picks a free one; the bound address is printed on stderr)")
	maxBody := fs.Int64("max-body", serve.DefaultMaxBody, "largest request body in `bytes`; a larger one is answered 413")
	maxTools := fs.Int("max-tools", serve.DefaultMaxTools, "most tools in one request (or MCP call); more are answered 413")
	maxInFlight := fs.Int64("max-in-flight", 0, "request body `bytes` held at once, counted as they are read (default 4 × --max-body)")
	maxConns := fs.Int("max-conns", serve.DefaultMaxConns, "most open connections; more wait to be accepted")
	memLimit := fs.Int64("memory-limit", defaultServeMemoryLimit, "the Go runtime's soft memory limit in `bytes` (0: none; GOMEMLIMIT, when set, stands unless this flag is given)")
	stdio := fs.Bool("stdio", false, "serve the MCP server over stdin and stdout instead of HTTP")
	if err := parseFlags(fs, args); err != nil {
		return serveOptions{}, err
	}
	if fs.NArg() > 0 {
		return serveOptions{}, usageError{"serve takes no arguments"}
	}
	for _, f := range []struct {
		name string
		v    int64
		zero bool // 0 allowed: the default
	}{{"max-body", *maxBody, false}, {"max-tools", int64(*maxTools), false}, {"max-in-flight", *maxInFlight, true}, {"max-conns", int64(*maxConns), false}} {
		if f.v < 0 || (f.v == 0 && !f.zero) {
			return serveOptions{}, usageError{fmt.Sprintf("--%s %d: want a positive number", f.name, f.v)}
		}
	}
	if *maxInFlight != 0 && *maxInFlight < *maxBody {
		return serveOptions{}, usageError{fmt.Sprintf("--max-in-flight %d is below --max-body %d: a body of the largest size could never be read", *maxInFlight, *maxBody)}
	}
	return serveOptions{
		cfg:      serve.Config{Addr: *listen, MaxBody: *maxBody, MaxTools: *maxTools, MaxInFlight: *maxInFlight, MaxConns: *maxConns},
		stdio:    *stdio,
		memLimit: *memLimit, memLimitGiven: flagSet(fs, "memory-limit"),
	}, nil
}

// serveRun serves o's server until ctx is cancelled.
func serveRun(ctx context.Context, env *cmdEnv, o serveOptions) error {
	applyMemoryLimit(o.memLimitGiven, o.memLimit)
	// Memory freed after a burst of large bodies goes back to the
	// operating system at most once a second.
	rec := reclaim.Start(time.Second)
	defer rec.Stop()
	cfg := o.cfg
	cfg.Logger, cfg.Reclaim = env.logger(slog.LevelInfo), rec.Request
	s := serve.New(cfg)
	if o.stdio {
		return s.ServeStdio(ctx, env.stdin, env.stdout)
	}
	return s.Run(ctx, func(a net.Addr) {
		fmt.Fprintf(env.stderr, "atlas-reproduce serve: serving on http://%s\n", a)
	})
}

// defaultServeMemoryLimit is serve's soft memory limit. The bounds on
// bodies, tools and labelling keep what requests hold to a few hundred
// megabytes at worst (a body that is one tool of a million empty
// properties); the limit makes the collector reclaim their garbage
// before the heap doubles past that, as it would by GOGC alone.
const defaultServeMemoryLimit = 256 << 20

// applyMemoryLimit sets the soft memory limit, unless it is 0, or GOMEMLIMIT
// is set and --memory-limit was not given.
func applyMemoryLimit(given bool, limit int64) {
	if limit == 0 || (!given && os.Getenv("GOMEMLIMIT") != "") {
		return
	}
	debug.SetMemoryLimit(limit)
}
