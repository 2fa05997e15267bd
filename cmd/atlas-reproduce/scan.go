package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/crawl"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

func init() {
	register(command{
		name:    "scan",
		summary: "label the tools of one live MCP server with the gg: classes, as classify does",
		run:     runScan,
	})
}

func runScan(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "scan", "scan [--format json|sarif] [--timeout DURATION] URL")
	format := fs.String("format", "json", "output `format`: json (one line per tool) or sarif (SARIF 2.1.0)")
	var pf probeFlags
	pf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// Flags may follow the URL too: scan URL --format sarif.
	var target string
	if fs.NArg() > 0 {
		target = fs.Arg(0)
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return err
		}
	}
	if target == "" || fs.NArg() != 0 {
		return usageError{"scan takes one URL"}
	}
	if *format != "json" && *format != "sarif" {
		return usageError{fmt.Sprintf("--format %q: want json or sarif", *format)}
	}
	po, err := pf.options()
	if err != nil {
		return err
	}
	// The user names the one server: a local one is a fair target.
	po.AllowAddr = crawl.AnyAddr
	id, r, err := crawl.Scan(ctx, target, po)
	if err != nil {
		return usageError{fmt.Sprintf("%s: %v", target, err)}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if !r.Reachable {
		return errors.New(id + ": unreachable (" + r.ErrorKind + "): " + r.Error)
	}
	out := bufio.NewWriterSize(env.stdout, 1<<16)
	emit, sarif := labelEmitter(*format, out)
	o := label.Origin{File: id, Line: 1}
	err = label.NewLabeller().Record(crawl.AppendToolsRecord(nil, id, r.Tools),
		func(t *label.ToolLabels) error { return emit(o, t) })
	if sarif != nil && err == nil {
		_, err = sarif.WriteTo(out)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	fmt.Fprintf(env.stderr, "scan: %s: %d tools over %s (protocol %s)\n", id, len(r.Tools), r.Transport, r.ProtocolVersion)
	return err
}
