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

// runProxy relays until SIGINT or SIGTERM cancels ctx (HTTP), or until the
// client closes stdin (--stdio); both are clean stops.
func runProxy(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "proxy", `proxy (--upstream URL | --upstream-cmd "COMMAND") [--listen ADDR | --stdio] [--hide CLASS] [--deny CLASS] [--allow-tool NAME] [--max-body BYTES] [--max-in-flight BYTES] [--max-conns N] [--max-sessions N] [--memory-limit BYTES]`)
	upstream := fs.String("upstream", "", "MCP server `URL`: Streamable HTTP, or legacy SSE when the path ends in /sse")
	upstreamCmd := fs.String("upstream-cmd", "", "stdio MCP server to start per session, as a shell-quoted `command` (e.g. \"npx -y @scope/server\"); nothing is expanded")
	listen := fs.String("listen", proxy.DefaultAddr, "`address` to serve Streamable HTTP on at /mcp, with /healthz and /metrics (port 0 picks a free one; the bound address is printed on stderr)")
	stdio := fs.Bool("stdio", false, "serve one session over stdin and stdout instead of HTTP, for clients that launch the proxy")
	maxBody := fs.Int64("max-body", proxy.DefaultMaxBody, "largest HTTP request body in `bytes`; a larger one is answered 413")
	cacheSize := fs.Int("cache-size", proxy.DefaultCacheSize, "tool definitions whose labels are kept (LRU)")
	maxInFlight := fs.Int64("max-in-flight", 0, "request body `bytes` held at once; a body waits for room, then is answered 503 (default 4 × --max-body)")
	maxConns := fs.Int("max-conns", proxy.DefaultMaxConns, "most open connections; more wait to be accepted")
	maxSessions := fs.Int("max-sessions", 0, fmt.Sprintf("most HTTP sessions, each holding an upstream session; an initialize beyond is answered 503 (default %d, or %d with --upstream-cmd: a process each)", proxy.DefaultMaxSessions, proxy.DefaultMaxCommandSessions))
	memLimit := fs.Int64("memory-limit", defaultServeMemoryLimit, "the Go runtime's soft memory limit in `bytes` (0: none; GOMEMLIMIT, when set, stands unless this flag is given)")
	var hide, deny classesFlag
	var allow listFlag
	fs.Var(&hide, "hide", "drop tools carrying `CLASS` (gg:command-string, command-string or command_string) from tools/list and refuse their calls; repeatable")
	fs.Var(&deny, "deny", "answer tools/call of tools carrying `CLASS` with a JSON-RPC error naming the class; repeatable")
	fs.Var(&allow, "allow-tool", "exempt the tool `NAME` from --hide and --deny; repeatable")
	quiet := fs.Bool("quiet", false, "log only upstream failures, not each policy decision")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"proxy takes no arguments"}
	}
	up := proxy.Upstream{URL: *upstream, Stderr: env.stderr}
	if *upstreamCmd != "" {
		words, err := proxy.SplitCommand(*upstreamCmd)
		if err != nil {
			return usageError{fmt.Sprintf("--upstream-cmd: %v", err)}
		}
		up.Command = words
	}
	if *maxBody <= 0 {
		return usageError{fmt.Sprintf("--max-body %d: want a positive number of bytes", *maxBody)}
	}
	for _, f := range []struct {
		name string
		v    int64
		zero bool
	}{{"max-in-flight", *maxInFlight, true}, {"max-conns", int64(*maxConns), false}, {"max-sessions", int64(*maxSessions), true}} {
		if f.v < 0 || (f.v == 0 && !f.zero) {
			return usageError{fmt.Sprintf("--%s %d: want a positive number", f.name, f.v)}
		}
	}
	if *maxInFlight != 0 && *maxInFlight <= *maxBody {
		return usageError{fmt.Sprintf("--max-in-flight %d is not above --max-body %d: a body of the largest size could never be read", *maxInFlight, *maxBody)}
	}
	setMemoryLimit(fs, *memLimit)
	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelWarn
	}
	rec := reclaim.Start(time.Second)
	defer rec.Stop()
	p, err := proxy.New(proxy.Config{
		Upstream:    up,
		Policy:      proxy.Policy{Hide: hide, Deny: deny, AllowTools: allow},
		Addr:        *listen,
		MaxBody:     *maxBody,
		MaxInFlight: *maxInFlight,
		MaxConns:    *maxConns,
		MaxSessions: *maxSessions,
		CacheSize:   *cacheSize,
		Logger:      env.logger(level),
		Reclaim:     rec.Request,
	})
	if err != nil {
		return usageError{err.Error()}
	}
	if *stdio {
		return p.ServeStdio(ctx, env.stdin, env.stdout)
	}
	return p.Run(ctx, func(a net.Addr) {
		fmt.Fprintf(env.stderr, "atlas-reproduce proxy: serving on http://%s/mcp\n", a)
	})
}
