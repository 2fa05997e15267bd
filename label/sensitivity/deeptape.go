package sensitivity

import (
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// The deep walk over the decoder's tape: what Deep.Beyond finds in a
// schema's text, read from the tape the decoder recorded as it parsed the
// tool (census.Tool.SchemaTape) instead of lexing the text again. The tape
// holds each object's members once per name, the last of equal names, so
// the text walk's rules for duplicates (the last "description", the last
// value of a keyword, the last entry of a map) hold without its bookkeeping.

// tapeWalk is one walk of a tape; it borrows the Deep's scratch memory.
type tapeWalk struct {
	tp   *census.Tape
	all  bool
	desc *[]byte
}

// BeyondTape is Beyond read from the tape of t's schema; ok is false when
// t has no tape (census.Tool.SchemaTape), and the caller walks the text.
func (w *Deep) BeyondTape(t *census.Tool) (set classify.Set, ok bool) {
	tp, n, ok := t.SchemaTape()
	if !ok {
		return 0, false
	}
	tw := tapeWalk{tp: &tp, desc: &w.desc}
	set, _ = tw.object(n, 0, true, true)
	return set, true
}

// object is Deep.object on the tape: the labels in and under the schema
// node n, and its "description" when that is a string (-1 otherwise).
func (w *tapeWalk) object(n census.TapeNode, depth int, norm, root bool) (classify.Set, census.TapeNode) {
	tp := w.tp
	var set classify.Set
	desc := census.TapeNode(-1)
	from, to := tp.Children(n)
	for m := from; m < to; m++ {
		switch key := tp.Key(m); string(key) {
		case "description":
			if tp.IsString(m) {
				desc = m
			} else {
				desc = -1
			}
		case "properties":
			if tp.IsObject(m) {
				set |= w.schemaMap(m, depth+1, true, norm && !w.all, false)
			}
		case "patternProperties":
			if tp.IsObject(m) {
				set |= w.schemaMap(m, depth+1, false, false, false)
			}
		case "$defs", "definitions":
			if tp.IsObject(m) {
				set |= w.schemaMap(m, depth+1, false, false, root)
			}
		case "additionalProperties", "not", "if", "then", "else":
			set |= w.schema(m, depth+1)
		case "items":
			if tp.IsArray(m) {
				set |= w.list(m, depth+1)
			} else {
				set |= w.schema(m, depth+1)
			}
		case "prefixItems", "anyOf", "oneOf", "allOf":
			if tp.IsArray(m) {
				set |= w.list(m, depth+1)
			}
		}
	}
	return set, desc
}

// schema is Deep.schema on the tape.
func (w *tapeWalk) schema(n census.TapeNode, depth int) classify.Set {
	if !w.tp.IsObject(n) || depth > MaxDepth {
		return 0
	}
	set, _ := w.object(n, depth, false, false)
	return set
}

// list is Deep.list on the tape.
func (w *tapeWalk) list(n census.TapeNode, depth int) classify.Set {
	var set classify.Set
	from, to := w.tp.Children(n)
	for e := from; e < to; e++ {
		set |= w.schema(e, depth)
	}
	return set
}

// schemaMap is Deep.schemaMap on the tape: its entries are one a name
// already.
func (w *tapeWalk) schemaMap(n census.TapeNode, depth int, props, skip, defs bool) classify.Set {
	tp := w.tp
	var all classify.Set
	from, to := tp.Children(n)
	for m := from; m < to; m++ {
		var set classify.Set
		desc := census.TapeNode(-1)
		switch {
		case !tp.IsObject(m):
		case depth > MaxDepth:
			if props && !skip {
				desc = w.description(m)
			}
		default:
			set, desc = w.object(m, depth, defs && !w.all, false)
		}
		if props && !skip {
			var d []byte
			if desc >= 0 {
				d, _ = tp.String(desc, w.desc)
			}
			set |= classify.PropertyBytes(tp.Key(m), d)
		}
		all |= set
	}
	return all
}

// description is the "description" member of the object n when it is a
// string, -1 otherwise.
func (w *tapeWalk) description(n census.TapeNode) census.TapeNode {
	from, to := w.tp.Children(n)
	for m := from; m < to; m++ {
		if string(w.tp.Key(m)) == "description" {
			if w.tp.IsString(m) {
				return m
			}
			return -1
		}
	}
	return -1
}
