package sensitivity

import (
	"bytes"
	"slices"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// MaxDepth is the deepest schema node the deep variant reads. The input
// schema is depth 0; a schema reached through one keyword of DeepKeywords
// from a node of depth d (a property's schema under "properties", an entry
// of "$defs", an element of "anyOf", ...) has depth d+1. The entries of the
// "properties" of a node of depth at most MaxDepth count, each with the
// description of its own schema; a node deeper than MaxDepth is not read,
// and no entry of its "properties" counts.
const MaxDepth = 64

// DeepKeywords are the keywords the deep variant follows, by the shape of
// their value. A value of another shape, and any value that is not a JSON
// object where a schema belongs, is not walked. "$ref" is not followed:
// every "$defs" and "definitions" entry is walked where it stands. The
// result is a fresh copy.
func DeepKeywords() KeywordSet {
	return KeywordSet{
		SchemaMaps:   []string{"properties", "patternProperties", "$defs", "definitions"},
		Schemas:      []string{"additionalProperties", "not", "if", "then", "else"},
		SchemaOrList: []string{"items"},
		Lists:        []string{"prefixItems", "anyOf", "oneOf", "allOf"},
	}
}

// KeywordSet is the JSON Schema keywords the deep variant follows, by the
// shape of their value.
type KeywordSet struct {
	// SchemaMaps hold objects whose values are schemas.
	SchemaMaps []string
	// Schemas hold a schema.
	Schemas []string
	// SchemaOrList holds a schema or a list of schemas.
	SchemaOrList []string
	// Lists hold lists of schemas.
	Lists []string
}

// Deep walks input schemas for the deep variant. It reads the schema's JSON
// text through census.Lexer, with CPython's json semantics: of duplicate
// keys the last value counts (a superseded value's subtree is ignored
// entirely), strings are unescaped by census.AppendUnescaped. The text is
// meant to be one a census.Decoder has accepted (Tool.Schema); where it is
// not valid JSON the walk stops at the first error and returns the labels
// found before it. It reuses its memory; the zero value is ready to use.
type Deep struct {
	lx    census.Lexer
	data  []byte
	bad   bool // the text failed to lex: every step from here is a no-op
	all   bool
	ents  []deepEntry // entries of the open maps, innermost last
	keys  []byte      // unescaped map keys, for as long as a walk lasts
	kbuf  []byte      // an unescaped member name, compared and dropped
	desc  []byte      // an unescaped description, classified and dropped
	order []int
}

type deepEntry struct {
	key []byte
	set classify.Set
}

// Labels returns the union of the labels (classes and buckets) of every
// property the deep variant reads in schema, the JSON text of an object.
func (w *Deep) Labels(schema []byte) classify.Set {
	w.all = true
	return w.walk(schema)
}

// Beyond is Labels without the properties the normative enumeration reads
// (the schema's own "properties", and those of its "definitions" and "$defs"
// entries): their labels are the tool's normative labels already, so what a
// tool gains, Labels &^ base, equals Beyond &^ base, and the common schema
// with no nested properties costs a scan and no classification.
func (w *Deep) Beyond(schema []byte) classify.Set {
	w.all = false
	return w.walk(schema)
}

func (w *Deep) walk(schema []byte) classify.Set {
	w.lx.Reset(schema)
	w.data, w.bad = schema, false
	w.ents, w.keys = w.ents[:0], w.keys[:0]
	p := w.lx.WS(0)
	if w.lx.At(p) != '{' {
		return 0
	}
	set, _, _, _ := w.object(p, 0, true, true)
	w.data = nil
	w.lx.Reset(nil)
	return set
}

// fail stops the walk at a lexing error: every later step sees the end of
// the text.
func (w *Deep) fail() int {
	w.bad = true
	return len(w.data)
}

// strEnd returns the index past the closing quote of the string whose
// opening quote is at q, and whether it holds an escape.
func (w *Deep) strEnd(q int) (int, bool) { return w.lx.StringEnd(q) }

// skip returns the index past the value at p.
func (w *Deep) skip(p int) int { return w.lx.SkipValidated(p) }

// str returns the decoded string whose quotes are at q and end-1, into buf
// when it holds escapes.
func (w *Deep) str(q, end int, esc bool, buf *[]byte) []byte {
	raw := w.data[q+1 : end-1]
	if !esc {
		return raw
	}
	*buf = census.AppendUnescaped((*buf)[:0], raw)
	return *buf
}

// member parses a member name and its colon at p and returns the name
// (valid until the next call) and the start of the value.
func (w *Deep) member(p int) ([]byte, int) {
	if w.lx.At(p) != '"' {
		return nil, w.fail()
	}
	end, esc, v := w.lx.KeyValidated(p)
	return w.str(p, end, esc, &w.kbuf), v
}

// next steps past the ',' or the '}' after a member's value (the ']'
// after an element when arr is set); done is true past the closing
// bracket, and at an error.
func (w *Deep) next(p int, arr bool) (int, bool) {
	if w.bad {
		return len(w.data), true
	}
	var done bool
	var err error
	if arr {
		p, done, err = w.lx.ArrNext(p)
	} else {
		p, done, err = w.lx.ObjNext(p)
	}
	if err != nil {
		return w.fail(), true
	}
	return p, done
}

// open steps into the container at p; done is true when it is empty.
func (w *Deep) open(p int) (int, bool) {
	if w.bad {
		return len(w.data), true
	}
	if w.lx.At(p) == '[' {
		return w.lx.ArrOpen(p)
	}
	return w.lx.ObjOpen(p)
}

// slot indexes the last value of each followed keyword in an object.
const (
	slotProperties = iota
	slotPatternProperties
	slotDefs
	slotDefinitions
	slotAdditional
	slotNot
	slotIf
	slotThen
	slotElse
	slotItems
	slotPrefixItems
	slotAnyOf
	slotOneOf
	slotAllOf
	numSlots
)

// object walks the schema node at p, of the given depth (at most MaxDepth).
// norm says its "properties" entries are normative ones (the root and the
// root's definitions and $defs entries); root says it is the input schema
// itself. It returns the labels found in and under it, the span of its last
// "description" member's value when that is a string (a < 0 otherwise), and
// the end.
func (w *Deep) object(p, depth int, norm, root bool) (classify.Set, int, int, int) {
	var slots [numSlots]classify.Set
	da, db := -1, -1
	p, done := w.open(p)
	for !done {
		key, q := w.member(p)
		p = q
		c := w.lx.At(p)
		slot := -1
		var set classify.Set
		switch string(key) {
		case "description":
			if c == '"' {
				end, _ := w.strEnd(p)
				da, db = p, end
				p = end
			} else {
				da, db = -1, -1
				p = w.skip(p)
			}
		case "properties":
			slot = slotProperties
			if c == '{' {
				set, p = w.schemaMap(p, depth+1, true, norm && !w.all, false)
			} else {
				p = w.skip(p)
			}
		case "patternProperties", "$defs", "definitions":
			switch string(key) {
			case "patternProperties":
				slot = slotPatternProperties
			case "$defs":
				slot = slotDefs
			default:
				slot = slotDefinitions
			}
			if c == '{' {
				set, p = w.schemaMap(p, depth+1, false, false, root && slot != slotPatternProperties)
			} else {
				p = w.skip(p)
			}
		case "additionalProperties", "not", "if", "then", "else":
			switch string(key) {
			case "additionalProperties":
				slot = slotAdditional
			case "not":
				slot = slotNot
			case "if":
				slot = slotIf
			case "then":
				slot = slotThen
			default:
				slot = slotElse
			}
			set, p = w.schema(p, depth+1)
		case "items":
			slot = slotItems
			if c == '[' {
				set, p = w.list(p, depth+1)
			} else {
				set, p = w.schema(p, depth+1)
			}
		case "prefixItems", "anyOf", "oneOf", "allOf":
			switch string(key) {
			case "prefixItems":
				slot = slotPrefixItems
			case "anyOf":
				slot = slotAnyOf
			case "oneOf":
				slot = slotOneOf
			default:
				slot = slotAllOf
			}
			if c == '[' {
				set, p = w.list(p, depth+1)
			} else {
				p = w.skip(p)
			}
		default:
			p = w.skip(p)
		}
		if slot >= 0 {
			slots[slot] = set
		}
		p, done = w.next(p, false)
	}
	var set classify.Set
	for _, s := range slots {
		set |= s
	}
	return set, da, db, p
}

// schema walks the value at p where a schema belongs, at the given depth.
func (w *Deep) schema(p, depth int) (classify.Set, int) {
	if w.lx.At(p) != '{' || depth > MaxDepth {
		return 0, w.skip(p)
	}
	set, _, _, end := w.object(p, depth, false, false)
	return set, end
}

// list walks a list of schemas at p, each at the given depth.
func (w *Deep) list(p, depth int) (classify.Set, int) {
	var set classify.Set
	p, done := w.open(p)
	for !done {
		var s classify.Set
		s, p = w.schema(p, depth)
		set |= s
		p, done = w.next(p, true)
	}
	return set, p
}

// schemaMap walks an object of schemas at p ("properties", "$defs", ...),
// whose values have the given depth. For "properties" (props), each entry
// is also a property: its name and its schema's description are classified,
// unless skip says they are normative ones. defs marks the root's
// definitions and $defs, whose entries' properties are normative. Of
// duplicate keys only the last entry counts.
func (w *Deep) schemaMap(p, depth int, props, skip, defs bool) (classify.Set, int) {
	data := w.data
	start := len(w.ents)
	p, done := w.open(p)
	for !done {
		if w.lx.At(p) != '"' {
			p = w.fail()
			break
		}
		end, esc, v := w.lx.KeyValidated(p)
		var key []byte
		if esc {
			a := len(w.keys)
			w.keys = census.AppendUnescaped(w.keys, data[p+1:end-1])
			key = w.keys[a:len(w.keys):len(w.keys)]
		} else {
			key = data[p+1 : end-1 : end-1]
		}
		p = v
		var set classify.Set
		da, db := -1, -1
		switch {
		case w.lx.At(p) != '{':
			p = w.skip(p)
		case depth > MaxDepth:
			if props && !skip {
				da, db, p = w.description(p)
			} else {
				p = w.skip(p)
			}
		default:
			set, da, db, p = w.object(p, depth, defs && !w.all, false)
		}
		if props && !skip {
			var desc []byte
			if da >= 0 {
				dend, desc0 := db, false
				_, desc0 = w.strEnd(da)
				desc = w.str(da, dend, desc0, &w.desc)
			}
			set |= classify.PropertyBytes(key, desc)
		}
		w.ents = append(w.ents, deepEntry{key: key, set: set})
		p, done = w.next(p, false)
	}
	set := w.resolve(start)
	w.ents = w.ents[:start]
	return set, p
}

// description reads only the last "description" of the object at p.
func (w *Deep) description(p int) (int, int, int) {
	da, db := -1, -1
	p, done := w.open(p)
	for !done {
		key, q := w.member(p)
		p = q
		if string(key) == "description" && w.lx.At(p) == '"' {
			end, _ := w.strEnd(p)
			da, db, p = p, end, end
		} else {
			if string(key) == "description" {
				da, db = -1, -1
			}
			p = w.skip(p)
		}
		p, done = w.next(p, false)
	}
	return da, db, p
}

// resolve returns the union of the sets of the entries from start on,
// keeping only the last entry of each key.
func (w *Deep) resolve(start int) classify.Set {
	ents := w.ents[start:]
	var set classify.Set
	if len(ents) <= 16 {
	outer:
		for i := range ents {
			for j := i + 1; j < len(ents); j++ {
				if string(ents[j].key) == string(ents[i].key) {
					continue outer
				}
			}
			set |= ents[i].set
		}
		return set
	}
	order := w.order[:0]
	for i := range ents {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int { return bytes.Compare(ents[a].key, ents[b].key) })
	for k, i := range order {
		if k+1 < len(order) && string(ents[order[k+1]].key) == string(ents[i].key) {
			continue
		}
		set |= ents[i].set
	}
	w.order = order
	return set
}
