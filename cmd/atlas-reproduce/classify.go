package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/report/sarif"
	"os"

	"github.com/atlas-reproduce/atlas-reproduce/internal/ctxio"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

func runClassify(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "classify", "classify [--schema FILE] [--format json|sarif] [--sensitivity] < tools.jsonl")
	schema := fs.String("schema", "", "classify one tool or input-schema `FILE` (a JSON document, possibly multi-line) instead of stdin")
	format := fs.String("format", "json", "output `format`: json (one line per tool) or sarif (SARIF 2.1.0, one result per labelled property and class)")
	sens := fs.Bool("sensitivity", false, "add to each tool's line a \"sensitivity\" key: the classes the non-normative variants camel_case, word_split and deep would add (json format only)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"classify takes no arguments (input on stdin or --schema FILE)"}
	}
	if *format != "json" && *format != "sarif" {
		return usageError{fmt.Sprintf("--format %q: want json or sarif", *format)}
	}
	out := bufio.NewWriterSize(env.stdout, 1<<16)
	if *sens && *format != "json" {
		return usageError{"--sensitivity needs --format json"}
	}
	emit, sw := labelEmitter(*format, out)
	l := label.NewLabeller()
	if *sens {
		l.WithSensitivity()
	}
	if sw != nil {
		l.WithDefinitionHash(definitionHash()) // SARIF fingerprints
	}
	var err error
	if *schema != "" {
		var doc []byte
		doc, err = os.ReadFile(*schema)
		if err == nil {
			err = l.ClassifyDocument(doc, *schema, emit)
		}
	} else {
		err = l.ClassifyStream(ctxio.Reader(ctx, env.stdin), "stdin", emit)
	}
	// The tools before a bad line are written before the error is reported.
	if sw != nil && err == nil {
		_, err = sw.WriteTo(out)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// labelEmitter returns the emit function of classify's output formats:
// one JSON line per tool written to out, or, for sarif, results gathered in
// the returned writer, which the caller writes at the end.
func labelEmitter(format string, out *bufio.Writer) (func(label.Origin, *label.ToolLabels) error, *sarif.Writer) {
	if format == "sarif" {
		sw := sarif.NewWriter()
		return func(o label.Origin, t *label.ToolLabels) error { sw.Add(o, t); return nil }, sw
	}
	var line []byte
	return func(_ label.Origin, t *label.ToolLabels) error {
		line = t.AppendJSON(line[:0])
		_, err := out.Write(line)
		return err
	}, nil
}

// definitionHash is the tool's definition SHA-256 as tools.parquet holds
// it, for a Labeller's WithDefinitionHash; one hasher per Labeller.
func definitionHash() func(*census.Tool) [32]byte {
	var h toolid.Hasher
	return func(t *census.Tool) [32]byte { return h.Tool(t).Definition }
}
