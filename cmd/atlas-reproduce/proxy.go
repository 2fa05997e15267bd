package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/reclaim"
	"github.com/atlas-reproduce/atlas-reproduce/proxy"
)

// listFlag is a flag that may be given many times, each value also a
// comma-separated list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, commaItems(v)...)
	return nil
}

// commaItems are the items of a comma-separated list, each trimmed of
// blanks; empty ones are skipped.
func commaItems(list string) []string {
	var items []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			items = append(items, s)
		}
	}
	return items
}

// proxyOptions is what proxy's flags say: the proxy's configuration but
// its logger and reclaimer, which the run makes.
type proxyOptions struct {
	cfg   proxy.Config
	stdio bool // one session over stdin and stdout instead of HTTP
	quiet bool // log only upstream failures
	// memLimit is --memory-limit; memLimitGiven whether it was given.
	memLimit      int64
	memLimitGiven bool
}

// runProxy relays until SIGINT or SIGTERM cancels ctx (HTTP), or until the
// client closes stdin (--stdio); both are clean stops.
var runProxy = parsed(parseProxy, proxyRun)

// parseProxy parses proxy's command line.
func parseProxy(env *cmdEnv, args []string) (proxyOptions, error) {
	fs := newFlagSet(env, "proxy", synopsis("proxy"))
	upstream := fs.String("upstream", "", "MCP server `URL`: Streamable HTTP, or legacy SSE when the path ends in /sse")
	upstreamCmd := fs.String("upstream-cmd", "", "stdio MCP server to start per session, as a shell-quoted `command` (e.g. \"npx -y @scope/server\"); nothing is expanded")
	listen := fs.String("listen", proxy.DefaultAddr, "`address` to serve Streamable HTTP on at /mcp, with /healthz and /metrics (port 0 picks a free one; the bound address is printed on stderr)")
	stdio := fs.Bool("stdio", false, "serve one session over stdin and stdout instead of HTTP, for clients that launch the proxy")
	maxBody := fs.Int64("max-body", proxy.DefaultMaxBody, "largest HTTP request body in `bytes`; a larger one is answered 413")
	cacheSize := fs.Int("cache-size", proxy.DefaultCacheSize, "tool definitions whose labels are kept (LRU)")
	maxInFlight := fs.Int64("max-in-flight", 0, "request body `bytes` held at once; a body waits for room, then is answered 503 (default 4 × --max-body)")
	maxConns := fs.Int("max-conns", proxy.DefaultMaxConns, "most open connections; more wait to be accepted")
	maxSessions := fs.Int("max-sessions", 0, fmt.Sprintf("most HTTP sessions, each holding an upstream session; an initialize beyond is answered 503 (default %d, or %d with --upstream-cmd: a process each)", proxy.DefaultMaxSessions, proxy.DefaultMaxCommandSessions))
	eventBytes := fs.Int("event-bytes", proxy.DefaultEventBytes, "`bytes` of sent events kept, over every session, for clients that resume a stream with Last-Event-ID")
	eventAge := fs.Duration("event-age", proxy.DefaultEventAge, "how long a sent event is kept for a client that resumes its stream")
	resumeWait := fs.Duration("resume-wait", proxy.DefaultResumeWait, "how long a 2026-07-28 call whose client was cut off goes on upstream, waiting for the client to resume its stream")
	memLimit := fs.Int64("memory-limit", defaultServeMemoryLimit, "the Go runtime's soft memory limit in `bytes` (0: none; GOMEMLIMIT, when set, stands unless this flag is given)")
	var hide, deny classesFlag
	var allow listFlag
	fs.Var(&hide, "hide", "drop tools carrying `CLASS` (gg:command-string, command-string or command_string) from tools/list and refuse their calls; repeatable")
	fs.Var(&deny, "deny", "answer tools/call of tools carrying `CLASS` with a JSON-RPC error naming the class; repeatable")
	fs.Var(&allow, "allow-tool", "exempt the tool `NAME` from --hide and --deny; repeatable")
	quiet := fs.Bool("quiet", false, "log only upstream failures, not each policy decision")
	if err := parseFlags(fs, args); err != nil {
		return proxyOptions{}, err
	}
	if fs.NArg() > 0 {
		return proxyOptions{}, usageError{"proxy takes no arguments"}
	}
	up := proxy.Upstream{URL: *upstream, Stderr: env.stderr}
	if *upstreamCmd != "" {
		words, err := proxy.SplitCommand(*upstreamCmd)
		if err != nil {
			return proxyOptions{}, usageError{fmt.Sprintf("--upstream-cmd: %v", err)}
		}
		up.Command = words
	}
	if *maxBody <= 0 {
		return proxyOptions{}, usageError{fmt.Sprintf("--max-body %d: want a positive number of bytes", *maxBody)}
	}
	for _, f := range []struct {
		name string
		v    int64
		zero bool
	}{{"max-in-flight", *maxInFlight, true}, {"max-conns", int64(*maxConns), false}, {"max-sessions", int64(*maxSessions), true},
		{"event-bytes", int64(*eventBytes), false}, {"event-age", int64(*eventAge), false}, {"resume-wait", int64(*resumeWait), false}} {
		if f.v < 0 || (f.v == 0 && !f.zero) {
			return proxyOptions{}, usageError{fmt.Sprintf("--%s %d: want a positive number", f.name, f.v)}
		}
	}
	if *maxInFlight != 0 && *maxInFlight <= *maxBody {
		return proxyOptions{}, usageError{fmt.Sprintf("--max-in-flight %d is not above --max-body %d: a body of the largest size could never be read", *maxInFlight, *maxBody)}
	}
	cfg := proxy.Config{
		Upstream:    up,
		Policy:      proxy.Policy{Hide: hide, Deny: deny, AllowTools: allow},
		Addr:        *listen,
		MaxBody:     *maxBody,
		MaxInFlight: *maxInFlight,
		MaxConns:    *maxConns,
		MaxSessions: *maxSessions,
		CacheSize:   *cacheSize,
		EventBytes:  *eventBytes,
		EventAge:    *eventAge,
		ResumeWait:  *resumeWait,
	}
	return proxyOptions{cfg: cfg, stdio: *stdio, quiet: *quiet, memLimit: *memLimit, memLimitGiven: flagSet(fs, "memory-limit")}, nil
}

// proxyRun builds the proxy o describes and serves until ctx is cancelled
// (HTTP) or the client closes stdin (--stdio).
func proxyRun(ctx context.Context, env *cmdEnv, o proxyOptions) error {
	applyMemoryLimit(o.memLimitGiven, o.memLimit)
	level := slog.LevelInfo
	if o.quiet {
		level = slog.LevelWarn
	}
	rec := reclaim.Start(time.Second)
	defer rec.Stop()
	cfg := o.cfg
	cfg.Logger = env.logger(level)
	cfg.Reclaim = rec.Request
	p, err := proxy.New(cfg)
	if err != nil {
		return usageError{err.Error()}
	}
	if o.stdio {
		return p.ServeStdio(ctx, env.stdin, env.stdout)
	}
	return p.Run(ctx, func(a net.Addr) {
		fmt.Fprintf(env.stderr, "atlas-reproduce proxy: serving on http://%s/mcp\n", a)
	})
}
