package label

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// labellers are Document's Labellers, one per concurrent call.
var labellers = sync.Pool{New: func() any { return NewLabeller() }}

// Document labels one JSON document held in memory: a tool, a tools/list
// result {"tools": [...]}, a census record of any accepted shape, or a
// bare input JSON Schema (labelled as the schema of an unnamed tool). It
// returns the labels of its tools in order, exactly what ClassifyBody
// emits. It is safe for concurrent use. Bad input is a *DecodeError with
// the byte offset into doc.
func Document(doc []byte) ([]ToolLabels, error) {
	l := labellers.Get().(*Labeller)
	defer labellers.Put(l)
	var out []ToolLabels
	err := l.ClassifyBody(doc, func(t *ToolLabels) error {
		out = append(out, *t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ClassifyDocument classifies one JSON document: a tool, a record of any
// accepted shape, or a bare input JSON Schema (an object with "properties"
// but none of the record keys), which is classified as the schema of an
// unnamed tool. It may span many lines.
func (l *Labeller) ClassifyDocument(doc []byte, file string, emit func(Origin, *ToolLabels) error) error {
	bare := isBareSchema(doc)
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
	at := func(t *ToolLabels) error { return emit(Origin{File: file, Line: lineOf(t)}, t) }
	var err error
	if bare {
		err = l.recordSchema(doc, at)
	} else {
		err = l.Record(doc, at)
	}
	if de, ok := err.(*DecodeError); ok {
		de.File = file
		return de
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// ClassifyBody classifies one JSON document already in memory, as
// ClassifyDocument does (a tool, a record of any accepted shape such as a
// tools/list result, or a bare input schema), calling emit per tool in
// order. Bad input is a *DecodeError with the byte offset into doc and no
// file name: the caller, a service, reports it to its client.
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
		return l.recordSchema(doc, emit)
	}
	return emit(held)
}

// schemaPrefix wraps a bare schema as the input schema of an unnamed tool.
const schemaPrefix = `{"inputSchema":`

// recordSchema labels the bare schema doc as the schema of an unnamed
// tool. A syntax error's offset is into doc, not into the wrapping (the
// decoder can refuse what encoding/json accepted: a number of more than
// 4,300 digits, nesting past 990 levels).
func (l *Labeller) recordSchema(doc []byte, emit func(*ToolLabels) error) error {
	wrapped := make([]byte, 0, len(doc)+len(schemaPrefix)+1)
	wrapped = append(append(append(wrapped, schemaPrefix...), doc...), '}')
	err := l.Record(wrapped, emit)
	var se *census.SyntaxError
	if de, ok := err.(*DecodeError); ok && errors.As(de.Err, &se) && se.Offset >= len(schemaPrefix) {
		shifted := *se
		shifted.Offset -= len(schemaPrefix)
		return newDecodeError(&shifted)
	}
	return err
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
