package label

import (
	"bytes"
	"fmt"
	"io"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// ClassifyStream classifies JSON Lines from r, calling emit per tool in
// input order; each line is a document ClassifyBody takes (a tool, a record,
// or a bare input schema). Blank lines are skipped as the reference skips
// them. A bad line stops it with a *DecodeError naming file and line, after
// every tool before it was emitted.
func (l *Labeller) ClassifyStream(r io.Reader, file string, emit func(Origin, *ToolLabels) error) error {
	lr := census.NewLineReader(r)
	for {
		text, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", file, lr.Line()+1, err)
		}
		if err := l.line(text, file, lr.Line(), emit); err != nil {
			return err
		}
	}
}

// ClassifyLines classifies JSON Lines held in memory, as ClassifyStream
// reads them from a stream (split on '\n' only, blank lines skipped, a last
// line without '\n' counted), without ClassifyStream's read buffer: a
// service that has the bounded body in hand classifies many small requests
// and should not allocate a megabyte for each. A bad line stops it with a
// *DecodeError naming file and line, after every tool before it was emitted.
func (l *Labeller) ClassifyLines(body []byte, file string, emit func(Origin, *ToolLabels) error) error {
	var line int64
	for len(body) > 0 {
		text := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			text, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line++
		if err := l.line(text, file, line, emit); err != nil {
			return err
		}
	}
	return nil
}

// line classifies one line of JSON Lines: both readers' shared step.
func (l *Labeller) line(text []byte, file string, line int64, emit func(Origin, *ToolLabels) error) error {
	if census.IsBlank(text) {
		return nil
	}
	o := Origin{File: file, Line: line}
	// A line holds one document of any shape ClassifyBody takes, a bare
	// input schema included, so that a schema gets the same labels on a
	// line of stdin as in a file given to --schema or a request body.
	err := l.ClassifyBody(text, func(t *ToolLabels) error { return emit(o, t) })
	if de, ok := err.(*DecodeError); ok {
		de.File, de.Line = file, line
	}
	return err
}
