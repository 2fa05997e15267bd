package main

import (
	"context"
	"fmt"
	"net"

	"github.com/atlas-reproduce/atlas-reproduce/serve"
)

func init() {
	register(command{
		name:    "serve",
		summary: "serve classify over HTTP (POST /v1/classify, /metrics) and MCP (/mcp, or --stdio) for gateways",
		run:     runServe,
	})
}

// runServe serves until SIGINT or SIGTERM cancels ctx. Unlike the batch
// commands, whose interrupted work is lost, a server that drained its
// in-flight requests has finished cleanly: it returns nil, so the exit
// status is 0. Only requests cut off by the shutdown bound make it an error.
func runServe(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "serve", "serve [--listen ADDR] [--max-body BYTES] [--stdio]")
	listen := fs.String("listen", serve.DefaultAddr, "`address` to listen on (port 0 picks a free one; the bound address is printed on stderr)")
	maxBody := fs.Int64("max-body", serve.DefaultMaxBody, "largest request body in `bytes`; a larger one is answered 413")
	stdio := fs.Bool("stdio", false, "serve the MCP server over stdin and stdout instead of HTTP")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"serve takes no arguments"}
	}
	if *maxBody <= 0 {
		return usageError{fmt.Sprintf("--max-body %d: want a positive number of bytes", *maxBody)}
	}
	s := serve.New(serve.Config{Addr: *listen, MaxBody: *maxBody, Version: version})
	if *stdio {
		return s.ServeStdio(ctx, env.stdin, env.stdout)
	}
	return s.Run(ctx, func(a net.Addr) {
		fmt.Fprintf(env.stderr, "atlas-reproduce serve: serving on http://%s\n", a)
	})
}
