package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/internal/crawl"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

func runScan(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "scan", "scan [--format json|sarif] [--timeout DURATION] [--lock FILE] (URL | npm:NAME@VERSION)\n\n"+
		"A package coordinate is installed (scripts off) and run over stdio in the sandbox the\n"+
		"crawl uses (bubblewrap), never bare.\n"+
		"With --lock, the first run writes the server's tools, their definition hashes and\n"+
		"labels to FILE; a later run compares the server with FILE, prints what changed on\n"+
		"standard error, and exits 1 when a tool changed, appeared or vanished.")
	format := fs.String("format", "json", "output `format`: json (one line per tool) or sarif (SARIF 2.1.0)")
	lockPath := fs.String("lock", "", "pin the server's tools in `FILE`, or compare them with it when it exists")
	var pf probeFlags
	pf.register(fs)
	var pkf packageFlags
	pkf.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"scan takes one URL or package coordinate"}
	}
	target := fs.Arg(0)
	if *format != "json" && *format != "sarif" {
		return usageError{fmt.Sprintf("--format %q: want json or sarif", *format)}
	}
	po, err := pf.options()
	if err != nil {
		return err
	}
	// The user names the one server: a local one is a fair target.
	po.AllowAddr = crawl.AnyAddr
	var id string
	var r crawl.Result
	if crawl.IsPackageCoordinate(target) {
		if _, err := crawl.ParsePackageID(target); err != nil {
			return usageError{err.Error()}
		}
		pko, err := pkf.options()
		if err != nil {
			return err
		}
		// No sandbox is a failure of the machine, not of the usage.
		if id, r, err = crawl.ScanPackage(ctx, target, po, pko); err != nil {
			return err
		}
	} else if id, r, err = crawl.Scan(ctx, target, po); err != nil {
		return usageError{fmt.Sprintf("%s: %v", target, err)}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if !r.Reachable {
		return errors.New(id + ": unreachable (" + r.ErrorKind + "): " + r.Error)
	}
	out := bufio.NewWriterSize(env.stdout, 1<<16)
	emit, sw := labelEmitter(*format, out)
	o := label.Origin{File: id, Line: 1}
	doc := crawl.AppendToolsRecord(nil, id, r.Tools)
	var labels []*label.ToolLabels
	err = label.NewLabeller().Record(doc, func(t *label.ToolLabels) error {
		labels = append(labels, t)
		return emit(o, t)
	})
	if sw != nil && err == nil {
		_, err = sw.WriteTo(out)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	fmt.Fprintf(env.stderr, "scan: %s: %d tools over %s (protocol %s)\n", id, len(r.Tools), r.Transport, r.ProtocolVersion)
	if err != nil || *lockPath == "" {
		return err
	}
	return checkLock(env, *lockPath, id, doc, labels)
}

// checkLock pins the scanned tools in path, or compares them with the
// pinned ones.
func checkLock(env *cmdEnv, path, id string, doc []byte, labels []*label.ToolLabels) error {
	now := toolid.New(id)
	err := now.AddRecord(doc, func(i int) ([]string, []string) { return labels[i].Classes, labels[i].RequiredClasses })
	if err != nil {
		return err
	}
	exists, err := toolid.Exists(path)
	if err != nil {
		return err
	}
	if !exists {
		if err := now.Write(path); err != nil {
			return err
		}
		fmt.Fprintf(env.stderr, "scan: pinned %d tools in %s\n", len(now.Tools), path)
		return nil
	}
	pinned, err := toolid.Read(path)
	if err != nil {
		return err
	}
	if pinned.ServerID != id {
		fmt.Fprintf(env.stderr, "scan: %s pins %s, not %s; comparing the tools anyway\n", path, pinned.ServerID, id)
	}
	changes := toolid.Compare(pinned, now)
	if len(changes) == 0 {
		fmt.Fprintf(env.stderr, "scan: the %d tools match %s\n", len(now.Tools), path)
		return nil
	}
	if err := toolid.WriteChanges(env.stderr, changes); err != nil {
		return err
	}
	return fmt.Errorf("%d tools changed, appeared or vanished since %s", len(changes), path)
}
