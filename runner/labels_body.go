package runner

import (
	"bytes"

	"github.com/atlas-reproduce/atlas-reproduce/census"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// ClassifyBody classifies one JSON document already in memory, as
// ClassifyDocument does (a tool, a record of any accepted shape such as a
// tools/list result, or a bare input schema), calling emit per tool in
// order. Errors are the decoder's own (*census.SyntaxError with the byte
// offset into doc, *census.RecordError), not wrapped with a file name: the
// caller, a service, reports them to its client.
//
// It decodes the document once in the common case. Only a document that
// yields a single tool with no properties can be a bare schema (a tool whose
// inputSchema held a property would have yielded it, and a record with
// "tools" or "tool" is never one), so only then is the top-level key test
// run, and the document classified again as the schema of an unnamed tool.
func (l *Labeller) ClassifyBody(doc []byte, emit func(*report.ToolLabels) error) error {
	var held *report.ToolLabels
	n := 0
	err := l.Record(doc, func(t *report.ToolLabels) error {
		n++
		if n == 1 {
			held = t
			return nil
		}
		if held != nil {
			if err := emit(held); err != nil {
				return err
			}
			held = nil
		}
		return emit(t)
	})
	if err != nil {
		return err
	}
	if n != 1 {
		return nil
	}
	if len(held.Properties) == 0 && isBareSchema(doc) {
		wrapped := make([]byte, 0, len(doc)+len(`{"inputSchema":}`))
		wrapped = append(append(append(wrapped, `{"inputSchema":`...), doc...), '}')
		return l.Record(wrapped, emit)
	}
	return emit(held)
}

// ClassifyLines classifies JSON Lines held in memory, as ClassifyStream
// reads them from a stream (split on '\n' only, blank lines skipped, a last
// line without '\n' counted), without ClassifyStream's read buffer: a
// service that has the bounded body in hand classifies many small requests
// and should not allocate a megabyte for each. A bad line stops it with a
// LineError naming file and line, after every tool before it was emitted.
func (l *Labeller) ClassifyLines(body []byte, file string, emit func(report.Origin, *report.ToolLabels) error) error {
	var line int64
	for len(body) > 0 {
		text := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			text, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line++
		if census.IsBlank(text) {
			continue
		}
		o := report.Origin{File: file, Line: line}
		if err := l.Record(text, func(t *report.ToolLabels) error { return emit(o, t) }); err != nil {
			if isDecodeError(err) {
				return &LineError{File: file, Line: line, Err: err}
			}
			return err
		}
	}
	return nil
}
