package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/atlas-reproduce/atlas-reproduce/census"
	"github.com/atlas-reproduce/atlas-reproduce/classify"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/sensitivity"
)

// Labeller classifies records one at a time, for the classify command: the
// gateway use, one schema or a stream of them, in input order.
type Labeller struct {
	dec *census.Decoder
	// sens, when set, adds what the sensitivity variants add to each tool.
	sens *sensitivity.Analyzer
}

// NewLabeller returns a Labeller.
func NewLabeller() *Labeller { return &Labeller{dec: census.NewDecoder()} }

// WithSensitivity makes the Labeller report, per tool, what the
// non-normative sensitivity variants add (classify --sensitivity).
func (l *Labeller) WithSensitivity() *Labeller {
	l.sens = new(sensitivity.Analyzer)
	return l
}

// Record classifies the tools of one record (any accepted shape) and calls
// emit for each, in order. The record is decoded a tool at a time
// (census.Decoder.Stream): a record of millions of tools never holds them
// all, and emit stopping early stops the decoding too. As with Decode, a
// record that fails to decode emits nothing.
func (l *Labeller) Record(doc []byte, emit func(*report.ToolLabels) error) error {
	rec, err := l.dec.Stream(doc)
	if err != nil {
		return err
	}
	for {
		t, err := l.dec.Next()
		if err != nil {
			return err
		}
		if t == nil {
			return nil
		}
		out := report.ToolLabels{Properties: make([]report.PropertyLabels, 0, len(t.Properties))}
		if rec.HasServerID {
			s := string(rec.ServerID)
			out.ServerID = &s
		}
		if t.HasName {
			s := string(t.Name)
			out.Tool = &s
		}
		var labels, required classify.Set
		for pi := range t.Properties {
			p := &t.Properties[pi]
			s := classify.PropertyBytes(p.Name, p.Description)
			labels |= s
			if p.Required {
				required |= s
			}
			out.Properties = append(out.Properties, report.PropertyLabels{
				Name: string(p.Name), Where: p.WhereString(), Required: p.Required,
				Classes: s.IDs(classify.Classes), Buckets: s.IDs(classify.Buckets),
			})
		}
		out.Classes, out.RequiredClasses, out.Buckets = labels.IDs(classify.Classes), required.IDs(classify.Classes), labels.IDs(classify.Buckets)
		if l.sens != nil {
			a := l.sens.Tool(t, labels)
			out.Sensitivity = &report.SensitivityLabels{
				CamelCase: a.CamelCase.IDs(classify.Classes), CamelCaseRequired: a.CamelCaseRequired.IDs(classify.Classes),
				WordSplit: a.WordSplit.IDs(classify.Classes), WordSplitRequired: a.WordSplitRequired.IDs(classify.Classes),
				Deep: a.Deep.IDs(classify.Classes),
			}
		}
		if err := emit(&out); err != nil {
			return err
		}
	}
}

// ClassifyStream classifies JSON Lines from r, calling emit per tool in
// input order. Blank lines are skipped as the reference skips them. A bad
// line stops it with a LineError, after every tool before it was emitted.
func (l *Labeller) ClassifyStream(r io.Reader, file string, emit func(report.Origin, *report.ToolLabels) error) error {
	lr := census.NewLineReader(r)
	for {
		text, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", file, lr.Line()+1, err)
		}
		if census.IsBlank(text) {
			continue
		}
		o := report.Origin{File: file, Line: lr.Line()}
		if err := l.Record(text, func(t *report.ToolLabels) error { return emit(o, t) }); err != nil {
			if isDecodeError(err) {
				return &LineError{File: file, Line: lr.Line(), Err: err}
			}
			return err
		}
	}
}

func isDecodeError(err error) bool {
	var se *census.SyntaxError
	var re *census.RecordError
	return errors.As(err, &se) || errors.As(err, &re)
}

// ClassifyDocument classifies one JSON document: a tool, a record of any
// accepted shape, or a bare input JSON Schema (an object with "properties"
// but none of the record keys), which is classified as the schema of an
// unnamed tool. It may span many lines.
func (l *Labeller) ClassifyDocument(doc []byte, file string, emit func(report.Origin, *report.ToolLabels) error) error {
	o := report.Origin{File: file, Line: 1}
	wrapped := doc
	if isBareSchema(doc) {
		wrapped = append(append([]byte(`{"inputSchema":`), doc...), '}')
	}
	if err := l.Record(wrapped, func(t *report.ToolLabels) error { return emit(o, t) }); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// isBareSchema reports whether doc is a JSON Schema rather than a record:
// its top-level keys include "properties" (or $defs/definitions) and none of
// inputSchema, input_schema, tools, tool.
func isBareSchema(doc []byte) bool {
	// Only the top-level keys matter here and this is not a hot path;
	// a document encoding/json cannot read (NaN, say) is taken as a record
	// and gets the decoder's exact treatment.
	var top map[string]json.RawMessage
	if json.Unmarshal(doc, &top) != nil {
		return false
	}
	schema := false
	for k := range top {
		switch k {
		case "inputSchema", "input_schema", "tools", "tool":
			return false
		case "properties", "$defs", "definitions":
			schema = true
		}
	}
	return schema
}
