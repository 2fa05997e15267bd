package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/atlas-reproduce/atlas-reproduce/internal/crawl"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

func runScan(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "scan", "scan [--format json|sarif] [--timeout DURATION] [--lock FILE] URL\n\n"+
		"With --lock, the first run writes the server's tools, their definition hashes and\n"+
		"labels to FILE; a later run compares the server with FILE, prints what changed on\n"+
		"standard error, and exits 1 when a tool changed, appeared or vanished.")
	format := fs.String("format", "json", "output `format`: json (one line per tool) or sarif (SARIF 2.1.0)")
	lockPath := fs.String("lock", "", "pin the server's tools in `FILE`, or compare them with it when it exists")
	var pf probeFlags
	pf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"scan takes one URL"}
	}
	target := fs.Arg(0)
	if *format != "json" && *format != "sarif" {
		return usageError{fmt.Sprintf("--format %q: want json or sarif", *format)}
	}
	po, err := pf.options()
	if err != nil {
		return err
	}
	// The lock is checked before the server is asked: a lock that cannot
	// be read or written is known without the scan.
	var pinned *toolid.File
	if *lockPath != "" {
		if pinned, err = readLock(*lockPath); err != nil {
			return err
		}
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
	return checkLock(env, *lockPath, pinned, id, doc, labels)
}

// readLock reads the lock at path, or returns nil when there is none yet
// and the folder it would be written to is there.
func readLock(path string) (*toolid.File, error) {
	exists, err := toolid.Exists(path)
	if err != nil {
		return nil, fmt.Errorf("--lock %s: %w", path, err)
	}
	if exists {
		return toolid.Read(path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("--lock %s: the folder %s does not exist", path, dir)
	case err != nil:
		return nil, fmt.Errorf("--lock %s: %w", path, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("--lock %s: %s is not a folder", path, dir)
	}
	return nil, nil
}

// checkLock pins the scanned tools in path (pinned is nil), or compares
// them with the pinned ones.
func checkLock(env *cmdEnv, path string, pinned *toolid.File, id string, doc []byte, labels []*label.ToolLabels) error {
	now := toolid.New(id)
	err := now.AddRecord(doc, func(i int) ([]string, []string) { return labels[i].Classes, labels[i].RequiredClasses })
	if err != nil {
		return err
	}
	if pinned == nil {
		if err := now.Write(path); err != nil {
			return fmt.Errorf("writing the lock %s: %w", path, err)
		}
		fmt.Fprintf(env.stderr, "scan: pinned %d tools in %s\n", len(now.Tools), path)
		return nil
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
