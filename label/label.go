// Package label turns a document into labels: a tool, a bare input JSON
// Schema, a tools/list result, a census record of any accepted shape, or
// JSON Lines of them. It is the one labeller of the classify, scan and serve
// commands and of a run's decode workers, and what a gateway imports to label
// the tools it lets through. It holds no I/O beyond the reader it is given,
// and none of the run's machinery (Parquet, compression, progress) or of a
// server's (the MCP SDK, metrics).
package label

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

// Labeller classifies records one at a time, in input order. It holds a
// decoder's arenas, so it is not safe for concurrent use: keep one per
// goroutine (a sync.Pool of them, in a service).
type Labeller struct {
	dec *census.Decoder
	// sens, when set, adds what the sensitivity variants add to each tool.
	sens *sensitivity.Analyzer
	// sets is Record's scratch for the labels of one tool's properties.
	sets []classify.Set
	// hasher, when set, gives each tool its definition hash.
	hasher *toolid.Hasher
}

// NewLabeller returns a Labeller.
func NewLabeller() *Labeller { return &Labeller{dec: census.NewDecoder()} }

// WithSensitivity makes the Labeller report, per tool, what the
// non-normative sensitivity variants add (classify --sensitivity).
func (l *Labeller) WithSensitivity() *Labeller {
	l.sens = new(sensitivity.Analyzer)
	return l
}

// WithDefinitionHash makes the Labeller give each tool its
// DefinitionSHA256 (the SHA-256 of its canonical JSON, as tools.parquet's
// definition_sha256), which SARIF fingerprints track alerts by.
func (l *Labeller) WithDefinitionHash() *Labeller {
	l.hasher = new(toolid.Hasher)
	return l
}

// AppendProperties is the per-tool kernel every labeller shares: it appends
// the labels of each of t's properties to dst, in order, and returns them
// with the tool's labels (the union) and its required classes (the classes
// of its required properties). A run's decode workers call it with their
// column of property labels as dst, so that nothing is copied.
func AppendProperties(dst []classify.Set, t *census.Tool) (out []classify.Set, labels, required classify.Set) {
	for pi := range t.Properties {
		p := &t.Properties[pi]
		s := classify.PropertyBytes(p.Name, p.Description)
		labels |= s
		if p.Required {
			required |= s
		}
		dst = append(dst, s)
	}
	return dst, labels, required & classify.Classes
}

// Record classifies the tools of one record (any accepted shape) and calls
// emit for each, in order. The record is decoded a tool at a time
// (census.Decoder.Stream): a record of millions of tools never holds them
// all, and emit stopping early stops the decoding too. As with Decode, a
// record that fails to decode emits nothing.
func (l *Labeller) Record(doc []byte, emit func(*ToolLabels) error) error {
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
		if err := emit(l.tool(rec, t)); err != nil {
			return err
		}
	}
}

// tool builds the labels of one tool of rec.
func (l *Labeller) tool(rec *census.Record, t *census.Tool) *ToolLabels {
	out := &ToolLabels{
		ServerID:   optString(rec.HasServerID, rec.ServerID),
		Tool:       optString(t.HasName, t.Name),
		Properties: make([]PropertyLabels, 0, len(t.Properties)),
		offset:     t.Offset,
	}
	if l.hasher != nil {
		sums := l.hasher.Tool(t)
		out.DefinitionSHA256 = hex.EncodeToString(sums.Definition[:])
	}
	sets, labels, required := AppendProperties(l.sets[:0], t)
	l.sets = sets
	for pi := range t.Properties {
		p, s := &t.Properties[pi], sets[pi]
		out.Properties = append(out.Properties, PropertyLabels{
			Name: string(p.Name), Where: p.WhereString(), Required: p.Required,
			Classes: s.IDs(classify.Classes), Buckets: s.IDs(classify.Buckets),
		})
	}
	out.Classes, out.RequiredClasses, out.Buckets = labels.IDs(classify.Classes), required.IDs(classify.Classes), labels.IDs(classify.Buckets)
	if l.sens != nil {
		a := l.sens.Tool(t, labels)
		out.Sensitivity = &SensitivityLabels{
			CamelCase: a.CamelCase.IDs(classify.Classes), CamelCaseRequired: a.CamelCaseRequired.IDs(classify.Classes),
			WordSplit: a.WordSplit.IDs(classify.Classes), WordSplitRequired: a.WordSplitRequired.IDs(classify.Classes),
			Deep: a.Deep.IDs(classify.Classes),
		}
	}
	return out
}

// optString is a decoded string field as the output has it: nil (JSON
// null) when the record lacks it.
func optString(has bool, b []byte) *string {
	if !has {
		return nil
	}
	s := string(b)
	return &s
}

// LineError is a bad line of an input file: the decoder's error, with the
// file and the 1-based line that a user needs to find it.
type LineError struct {
	File string
	Line int64
	Err  error
}

// Error says "file: line N: " and the decoder's message.
func (e *LineError) Error() string { return fmt.Sprintf("%s: line %d: %v", e.File, e.Line, e.Err) }

// Unwrap gives the decoder's error (*census.SyntaxError or
// *census.RecordError), for errors.As.
func (e *LineError) Unwrap() error { return e.Err }

// isDecodeError reports whether err is the decoder's verdict on the input,
// which belongs to a line, rather than an error of emit.
func isDecodeError(err error) bool {
	var se *census.SyntaxError
	var re *census.RecordError
	return errors.As(err, &se) || errors.As(err, &re)
}
