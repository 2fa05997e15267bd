// Package label turns a document into labels: a tool, a bare input JSON
// Schema, a tools/list result, a census record of any accepted shape, or
// JSON Lines of them. It is the one labeller of the classify, scan, serve and
// proxy commands and of scan's lock (a run's decode workers run its per-tool
// kernel fused with their column fill), and what a gateway imports to label
// the tools it lets through: Document for one document in one call, a
// Labeller for streams. Results belong to the caller; bad input is a
// *DecodeError. It holds no I/O beyond the reader it is given, and none of
// the run's machinery (Parquet, compression, progress) or of a server's (the
// MCP SDK, metrics): its dependencies are label/... and the standard library.
package label

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"

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
	// defHash, when set, gives each tool its definition hash.
	defHash func(*census.Tool) [32]byte
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
// DefinitionSHA256, computed by def (the run's toolid.Hasher gives the
// SHA-256 of the tool's canonical JSON, as tools.parquet's
// definition_sha256), which SARIF fingerprints track alerts by. The hash is
// a parameter so that label stays free of the tool-identity package, which
// itself labels through label.
func (l *Labeller) WithDefinitionHash(def func(t *census.Tool) [32]byte) *Labeller {
	l.defHash = def
	return l
}

// RememberTools makes the Labeller's decoder remember tool texts
// (census.Decoder.RememberTools), so that a per-tool computation keyed by
// Tool.Text, such as a definition hash by toolid.Hasher, is done once per
// distinct text of a long stream.
func (l *Labeller) RememberTools() *Labeller {
	l.dec.RememberTools()
	return l
}

// appendProperties is the per-tool kernel: it appends the labels of each
// of t's properties to dst, in order, and returns them with the tool's
// labels (the union) and its required classes (the classes of its required
// properties). A run's decode workers do the same in their own loop, over
// their column of property labels.
func appendProperties(dst []classify.Set, t *census.Tool) (out []classify.Set, labels, required classify.Set) {
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
// all, and emit stopping early stops the decoding too. A record that fails
// to decode emits nothing and returns a *DecodeError; an error of emit is
// returned as it is.
//
// The *ToolLabels and every slice in it are the caller's: nothing in them is
// shared with another result or with the package, so emit may keep or
// change them.
func (l *Labeller) Record(doc []byte, emit func(*ToolLabels) error) error {
	rec, err := l.dec.Stream(doc)
	if err != nil {
		return newDecodeError(err)
	}
	for {
		t, err := l.dec.Next()
		if err != nil {
			return newDecodeError(err)
		}
		if t == nil {
			return nil
		}
		if err := emit(l.tool(rec, t)); err != nil {
			return err
		}
	}
}

// tool builds the labels of one tool of rec. Its identifier slices are
// copies of classify's shared ones, carved from one array per tool, each
// with its capacity cut to its length so that an append by the caller
// copies rather than writes into its neighbour.
func (l *Labeller) tool(rec *census.Record, t *census.Tool) *ToolLabels {
	out := &ToolLabels{
		ServerID:   optString(rec.HasServerID, rec.ServerID),
		Tool:       optString(t.HasName, t.Name),
		Properties: make([]PropertyLabels, 0, len(t.Properties)),
		offset:     t.Offset,
	}
	if l.defHash != nil {
		sum := l.defHash(t)
		out.DefinitionSHA256 = hex.EncodeToString(sum[:])
	}
	sets, labels, required := appendProperties(l.sets[:0], t)
	l.sets = sets
	var a *sensitivity.Added
	if l.sens != nil {
		added := l.sens.Tool(t, labels)
		a = &added
	}
	ids := newIDs(sets, labels, required, a)
	for pi := range t.Properties {
		p, s := &t.Properties[pi], sets[pi]
		out.Properties = append(out.Properties, PropertyLabels{
			Name: string(p.Name), Where: p.WhereString(), Required: p.Required,
			Classes: ids.take(s, classify.Classes), Buckets: ids.take(s, classify.Buckets),
		})
	}
	out.Classes, out.RequiredClasses, out.Buckets = ids.take(labels, classify.Classes), ids.take(required, classify.Classes), ids.take(labels, classify.Buckets)
	if a != nil {
		out.Sensitivity = &SensitivityLabels{
			CamelCase: VariantLabels{Classes: ids.take(a.CamelCase, classify.Classes), RequiredClasses: ids.take(a.CamelCaseRequired, classify.Classes)},
			WordSplit: VariantLabels{Classes: ids.take(a.WordSplit, classify.Classes), RequiredClasses: ids.take(a.WordSplitRequired, classify.Classes)},
			Deep:      DeepLabels{Classes: ids.take(a.Deep, classify.Classes)},
		}
	}
	return out
}

// idArena is one tool's identifier strings, in one array.
type idArena []string

// newIDs sizes the arena for every slice tool takes: per property its
// classes and buckets, the tool's classes, required classes and buckets,
// and the sensitivity sets when a is set.
func newIDs(sets []classify.Set, labels, required classify.Set, a *sensitivity.Added) idArena {
	n := bits.OnesCount16(uint16(labels&(classify.Classes|classify.Buckets))) + bits.OnesCount16(uint16(required&classify.Classes))
	for _, s := range sets {
		n += bits.OnesCount16(uint16(s & (classify.Classes | classify.Buckets)))
	}
	if a != nil {
		for _, s := range [...]classify.Set{a.CamelCase, a.CamelCaseRequired, a.WordSplit, a.WordSplitRequired, a.Deep} {
			n += bits.OnesCount16(uint16(s & classify.Classes))
		}
	}
	return make(idArena, 0, n)
}

// take appends the identifiers of s&mask to the arena and returns them as
// a slice of their own: never nil (JSON []), capacity equal to length.
func (a *idArena) take(s, mask classify.Set) []string {
	n := len(*a)
	*a = append(*a, s.IDs(mask)...)
	return (*a)[n:len(*a):len(*a)]
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

// DecodeError is input that does not decode: JSON that CPython's json
// module would reject (Offset is then the byte where it was found), or
// valid JSON that is not one of the accepted record shapes (Offset -1).
// Every labelling call returns it for bad input, so that a caller finds
// the place with errors.As:
//
//	var de *label.DecodeError
//	if errors.As(err, &de) { ... de.Line, de.Offset ... }
type DecodeError struct {
	// File is the input's name as the caller gave it; empty for a
	// document in memory (Document, ClassifyBody, Record).
	File string
	// Line is the 1-based line of JSON Lines input; 0 for a document.
	Line int64
	// Offset is the byte offset of a syntax error in the line or
	// document; -1 when the JSON is valid but no record.
	Offset int
	// Err is the decoder's error: a *census.SyntaxError or a
	// *census.RecordError.
	Err error
}

// NewDecodeError returns the DecodeError of a decoder's error err at line
// of file (line 0 for a whole document), for readers of JSON Lines outside
// this package such as a run's decode workers.
func NewDecodeError(file string, line int64, err error) *DecodeError {
	de := newDecodeError(err)
	de.File, de.Line = file, line
	return de
}

// newDecodeError wraps a census error, taking its offset.
func newDecodeError(err error) *DecodeError {
	de := &DecodeError{Offset: -1, Err: err}
	var se *census.SyntaxError
	if errors.As(err, &se) {
		de.Offset = se.Offset
	}
	return de
}

// Error says "file: line N: " (the parts that are set) and the decoder's
// message, which ends in "at byte N" for a syntax error.
func (e *DecodeError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s: line %d: %v", e.File, e.Line, e.Err)
	case e.File != "":
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return e.Err.Error()
}

// Unwrap gives the decoder's error (*census.SyntaxError or
// *census.RecordError), for errors.As.
func (e *DecodeError) Unwrap() error { return e.Err }
