package label

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ClassifyDocument classifies one JSON document: a tool, a record of any
// accepted shape, or a bare input JSON Schema (an object with "properties"
// but none of the record keys), which is classified as the schema of an
// unnamed tool. It may span many lines.
func (l *Labeller) ClassifyDocument(doc []byte, file string, emit func(Origin, *ToolLabels) error) error {
	wrapped := doc
	bare := isBareSchema(doc)
	if bare {
		wrapped = append(append([]byte(`{"inputSchema":`), doc...), '}')
	}
	// Tools come in document order: the lines are counted once.
	counted, line := 0, int64(1)
	lineOf := func(t *ToolLabels) int64 {
		if bare || t.offset > len(doc) {
			return 1
		}
		if t.offset < counted {
			return line
		}
		line += int64(bytes.Count(doc[counted:t.offset], []byte{'\n'}))
		counted = t.offset
		return line
	}
	if err := l.Record(wrapped, func(t *ToolLabels) error { return emit(Origin{File: file, Line: lineOf(t)}, t) }); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

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
func (l *Labeller) ClassifyBody(doc []byte, emit func(*ToolLabels) error) error {
	var held *ToolLabels
	n := 0
	err := l.Record(doc, func(t *ToolLabels) error {
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
