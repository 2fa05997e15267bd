package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/atlas-reproduce/atlas-reproduce/internal/ctxio"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline/linepool"
	"github.com/atlas-reproduce/atlas-reproduce/report/sarif"
)

// classifyOptions is what classify's flags say.
type classifyOptions struct {
	schema      string // one document's file, "-" for stdin; "" for JSON Lines on stdin
	format      string // "json" or "sarif"
	sensitivity bool   // add the variants' classes (json only)
}

var runClassify = parsed(parseClassify, classifyRun)

// parseClassify parses classify's command line.
func parseClassify(env *cmdEnv, args []string) (classifyOptions, error) {
	fs := newFlagSet(env, "classify", synopsis("classify"))
	schema := fs.String("schema", "", "classify one tool or input-schema `FILE` (a JSON document, possibly multi-line) instead of JSON Lines on stdin; - reads that one document from stdin")
	format := fs.String("format", "json", "output `format`: json (one line per tool) or sarif (SARIF 2.1.0, one result per labelled property and class)")
	sens := fs.Bool("sensitivity", false, "add to each tool's line a \"sensitivity\" key: the classes the non-normative variants camel_case, word_split and deep would add (json format only)")
	if err := parseFlags(fs, args); err != nil {
		return classifyOptions{}, err
	}
	if fs.NArg() > 0 {
		return classifyOptions{}, usageError{"classify takes no arguments (input on stdin or --schema FILE)"}
	}
	if *format != "json" && *format != "sarif" {
		return classifyOptions{}, usageError{fmt.Sprintf("--format %q: want json or sarif", *format)}
	}
	if *sens && *format != "json" {
		return classifyOptions{}, usageError{"--sensitivity needs --format json"}
	}
	return classifyOptions{schema: *schema, format: *format, sensitivity: *sens}, nil
}

// classifyRun labels the tools of stdin, or of o.schema's one document, and
// writes their labels to stdout.
func classifyRun(ctx context.Context, env *cmdEnv, o classifyOptions) error {
	out := bufio.NewWriterSize(env.stdout, 1<<16)
	emit, sw := labelEmitter(o.format, out)
	l := label.NewLabeller()
	if o.sensitivity {
		l.WithSensitivity()
	}
	if sw != nil {
		// SARIF fingerprints; a census serves each definition many
		// times, hashed once per text.
		l.WithDefinitionHash(definitionHash()).RememberTools()
	}
	var err error
	if o.schema != "" {
		var doc []byte
		name := o.schema
		doc, err = readSchema(ctx, env, name)
		if name == "-" {
			name = "stdin"
		}
		if err == nil {
			err = l.ClassifyDocument(doc, name, emit)
		}
	} else {
		err = l.ClassifyStream(ctxio.Reader(ctx, env.stdin), "stdin", emit)
		var se *census.SyntaxError
		if errors.As(err, &se) {
			err = fmt.Errorf("%w (stdin is read as JSON Lines, one document per line; for one document over many lines, such as pretty-printed JSON, use --schema -)", err)
		}
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

// readSchema reads the one document of --schema: the file, or stdin for
// "-". A document is decoded whole, so it is bounded as a census line is.
func readSchema(ctx context.Context, env *cmdEnv, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = ctxio.Reader(ctx, env.stdin)
		name = "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	const limit = linepool.DefaultMaxLine
	doc, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc) > limit {
		return nil, fmt.Errorf("%s: more than %d bytes: too long for one document", name, limit)
	}
	return doc, nil
}
