package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/runners"
	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

// scanOptions is the scan command as a test calls it: one target
// (Target, Format, Lock, Probe, Packages), or the servers of agent
// configs (Config).
type scanOptions struct {
	Target   string
	Format   string // json or sarif
	Lock     string
	Probe    probe.Options
	Packages runners.Options
	// Config, when set, is a config scan (--config, --repo): the other
	// fields are unused.
	Config *scanConfigOptions
}

func runScan(ctx context.Context, env *cmdEnv, args []string) error {
	o, err := parseScan(env, args)
	if err != nil {
		return err
	}
	return runScanOpts(ctx, env, o)
}

// runScanOpts runs a parsed scan.
func runScanOpts(ctx context.Context, env *cmdEnv, o scanOptions) error {
	if o.Config != nil {
		return runScanConfig(ctx, env, *o.Config)
	}
	return runScanTarget(ctx, env, o)
}

// parseScan reads the scan command line.
func parseScan(env *cmdEnv, args []string) (scanOptions, error) {
	var so scanOptions
	fs := newFlagSet(env, "scan", synopsis("scan"))
	format := fs.String("format", "json", "output `format`: json (one line per tool; with --config, per server) or sarif (SARIF 2.1.0)")
	lockPath := fs.String("lock", "", "pin the server's tools in `FILE`, or compare them with it when it exists")
	var cf configFlag
	fs.Var(&cf, "config", "scan the MCP servers of this user's agent clients (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, Codex, Zed); --config FILE reads one file")
	repo := fs.String("repo", "", "scan the MCP servers configured in the repository at `DIR` (.mcp.json, .cursor/mcp.json, .vscode/mcp.json, ...)")
	asJSON := fs.Bool("json", false, "with --config or --repo: one JSON object per server instead of the table")
	list := fs.Bool("list", false, "with --config or --repo: list the servers, start none")
	failOnList := fs.String("fail-on", "", "with --config or --repo: exit 1 when a tool has one of these comma-separated `CLASSES`, a server is unpinned (unpinned), or a tool changed since --lock (changed)")
	suppressions := fs.String("suppressions", "", "with --config or --repo: accept the findings listed in `FILE` (YAML or JSON: class, server, tool, reason, expires)")
	noLocal := fs.Bool("no-local", false, "with --config or --repo: list local commands (node ./server.js, a binary) without running them in the sandbox")
	approve := fs.Bool("approve", false, "with --config or --repo and --lock: accept the changes found, rewriting the lock and naming each")
	var pf probeFlags
	pf.register(fs)
	var pkf packageFlags
	pkf.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return so, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cf.set || *repo != "" {
		o := scanConfigOptions{Files: cf.files, Repo: *repo, JSON: *asJSON, List: *list, Lock: *lockPath, Approve: *approve, NoLocal: *noLocal,
			Suppressions: *suppressions, Now: time.Now()}
		formatSet := set["format"]
		switch {
		case formatSet && *format == "sarif":
			o.SARIF = true
		case formatSet && *format == "json":
			o.JSON = true
		case formatSet:
			return so, usageError{fmt.Sprintf("--format %q: want json or sarif", *format)}
		}
		if o.SARIF && *asJSON {
			return so, usageError{"--format sarif and --json are two outputs: choose one"}
		}
		var err error
		if *failOnList != "" {
			if o.FailOn, err = parseFailOn(*failOnList); err != nil {
				return so, err
			}
		}
		if o.Probe, err = pf.options(); err != nil {
			return so, err
		}
		pko, err := pkf.options()
		if err != nil {
			return so, err
		}
		o.Packages = &pko
		switch {
		case fs.NArg() > 1:
			return so, usageError{"scan --config takes at most one FILE"}
		case fs.NArg() == 1 && cf.set:
			o.Files = append(o.Files, fs.Arg(0))
		case fs.NArg() == 1:
			return so, usageError{"scan --repo takes no URL or package coordinate"}
		}
		if cf.set && len(o.Files) == 0 {
			home, err := os.UserHomeDir()
			if err != nil {
				return so, err
			}
			o.Home = home
			if o.Repo == "" {
				// The project the user stands in counts too.
				if o.Repo, err = os.Getwd(); err != nil {
					return so, err
				}
			}
		}
		so.Config = &o
		return so, nil
	}
	for _, f := range []string{"json", "list", "fail-on", "suppressions", "no-local", "approve"} {
		if set[f] {
			return so, usageError{"--" + f + " goes with --config or --repo"}
		}
	}
	if fs.NArg() != 1 {
		return so, usageError{"scan takes one URL or package coordinate"}
	}
	so.Target, so.Format, so.Lock = fs.Arg(0), *format, *lockPath
	if so.Format != "json" && so.Format != "sarif" {
		return so, usageError{fmt.Sprintf("--format %q: want json or sarif", so.Format)}
	}
	if runners.IsPackageCoordinate(so.Target) {
		if _, err := runners.ParsePackageID(so.Target); err != nil {
			return so, usageError{err.Error()}
		}
	}
	var err error
	if so.Probe, err = pf.options(); err != nil {
		return so, err
	}
	so.Packages, err = pkf.options()
	return so, err
}

// runScanTarget scans the one server o.Target names.
func runScanTarget(ctx context.Context, env *cmdEnv, o scanOptions) error {
	po := o.Probe
	// The lock is checked before the server is asked: a lock that cannot
	// be read or written is known without the scan.
	var pinned *toolid.File
	var err error
	if o.Lock != "" {
		if pinned, err = toolid.ReadPinned(o.Lock); err != nil {
			return err
		}
	}
	// The user names the one server: a local one is a fair target.
	po.AllowAddr = probe.AnyAddr
	var id string
	var r probe.Result
	if runners.IsPackageCoordinate(o.Target) {
		// No sandbox is a failure of the machine, not of the usage.
		if id, r, err = runners.ScanPackage(ctx, o.Target, po, o.Packages); err != nil {
			return err
		}
	} else if id, r, err = probe.Scan(ctx, o.Target, po); err != nil {
		return usageError{fmt.Sprintf("%s: %v", o.Target, err)}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if !r.Reachable {
		// The server's words reach the terminal escaped: its error text
		// may hold control sequences.
		return errors.New(termtext.Safe(id + ": unreachable (" + r.ErrorKind + "): " + r.Error + serverSaid(r.RPCError)))
	}
	out := bufio.NewWriterSize(env.stdout, 1<<16)
	emit, sw := labelEmitter(o.Format, out)
	origin := label.Origin{File: id, Line: 1}
	doc := probe.AppendToolsRecord(nil, id, r.Tools)
	l := label.NewLabeller()
	if sw != nil {
		l.WithDefinitionHash(definitionHash()) // SARIF fingerprints
	}
	err = l.Record(doc, func(t *label.ToolLabels) error { return emit(origin, t) })
	if sw != nil && err == nil {
		_, err = sw.WriteTo(out)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	fmt.Fprintf(env.stderr, "scan: %s: %d tools over %s (protocol %s, %s)\n", termtext.Safe(id), len(r.Tools), r.Transport, termtext.Safe(r.ProtocolVersion), r.Generation)
	if err != nil || o.Lock == "" {
		return err
	}
	return checkLock(env, o.Lock, pinned, id, doc)
}

// serverSaid is the JSON-RPC error a server answered, for the message of
// an unreachable one: its code and data say what it wants (the revisions
// it speaks, say), which the SDK's text leaves out.
func serverSaid(e *probe.RPCError) string {
	if e == nil {
		return ""
	}
	s := fmt.Sprintf(" (the server said: %d %q", e.Code, e.Message)
	if len(e.Data) > 0 {
		s += ", data " + string(e.Data)
	}
	return s + ")"
}

// checkLock runs the lock step (toolid.PinOrCompare) and says what it did.
func checkLock(env *cmdEnv, path string, pinned *toolid.File, id string, doc []byte) error {
	o, err := toolid.PinOrCompare(path, pinned, id, doc)
	switch {
	case err != nil:
		return err
	case o.Wrote:
		fmt.Fprintf(env.stderr, "scan: pinned %d tools in %s\n", len(o.Now.Tools), path)
		return nil
	}
	if o.Pinned.ServerID != id {
		fmt.Fprintf(env.stderr, "scan: %s pins %s, not %s; comparing the tools anyway\n", path, o.Pinned.ServerID, id)
	}
	if len(o.Changes) == 0 {
		if len(o.Now.Tools) == 1 {
			fmt.Fprintf(env.stderr, "scan: the one tool matches %s\n", path)
		} else {
			fmt.Fprintf(env.stderr, "scan: the %d tools match %s\n", len(o.Now.Tools), path)
		}
		return nil
	}
	if err := toolid.WriteChanges(env.stderr, o.Changes); err != nil {
		return err
	}
	return verdictError{fmt.Sprintf("%s changed, appeared or vanished since %s", countTools(len(o.Changes)), path)}
}

// countTools is n with "tool" or "tools", as a sentence says it.
func countTools(n int) string {
	if n == 1 {
		return "1 tool"
	}
	return fmt.Sprintf("%d tools", n)
}
