package synth

import "strings"

// Serialisation of the tool model, in the layout of Python's json.dumps
// (", " and ": " separators), which is how census dumps are usually written.
// Writer-only details (decorations, decoys, nested schemas) draw on the
// generator's random stream too, so they are as deterministic as the rest.

func (g *gen) appendTool(b []byte, t *tool) []byte {
	b = append(b, '{')
	return append(g.appendToolFields(b, t), '}')
}

// appendToolFields writes the members of the tool object without braces.
func (g *gen) appendToolFields(b []byte, t *tool) []byte {
	n := len(b)
	sep := func(b []byte) []byte {
		if len(b) > n {
			return comma(b)
		}
		return b
	}
	switch t.nameKind {
	case kString:
		b = appendKey(b, "name")
		b = appendString(b, t.name, escPlain)
	case kNumber:
		b = appendKey(b, "name")
		b = appendInt(b, g.intn(1000))
	}
	if t.deco&tdTitle != 0 {
		b = appendKey(sep(b), "title")
		b = appendString(b, titleCase(t.name), escPlain)
	}
	switch t.descKind {
	case kString:
		b = appendKey(sep(b), "description")
		b = appendString(b, t.desc, t.descStyle)
	case kNull:
		b = appendKey(sep(b), "description")
		b = append(b, "null"...)
	}
	switch t.place {
	case placeInput:
		b = appendKey(sep(b), "inputSchema")
		b = g.appendSchema(b, &t.top, t)
	case placeSnake:
		b = appendKey(sep(b), "input_schema")
		b = g.appendSchema(b, &t.top, t)
	case placeNullSnake:
		b = appendKey(sep(b), "inputSchema")
		b = append(b, "null, "...)
		b = appendKey(b, "input_schema")
		b = g.appendSchema(b, &t.top, t)
	case placeBoth:
		b = appendKey(sep(b), "inputSchema")
		b = g.appendSchema(b, &t.top, t)
		b = appendKey(comma(b), "input_schema")
		b = g.appendDecoySchema(b)
	case placeString:
		// A schema serialised twice: a string that only looks like one.
		g.scratch = g.appendSchema(g.scratch[:0], &t.top, t)
		b = appendKey(sep(b), "inputSchema")
		b = appendString(b, string(g.scratch), escPlain)
		if g.chance(0.5) {
			b = appendKey(comma(b), "input_schema")
			b = g.appendDecoySchema(b)
		}
	case placeNullOnly:
		b = appendKey(sep(b), "inputSchema")
		b = append(b, "null"...)
	}
	if t.deco&tdAnnotations != 0 {
		b = appendKey(sep(b), "annotations")
		b = append(b, '{')
		b = appendKey(b, pick(g, []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}))
		b = append(b, pick(g, []string{"true", "false"})...)
		b = append(b, '}')
	}
	return b
}

func titleCase(s string) string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' })
	for i, p := range parts {
		if p != "" && p[0] >= 'a' && p[0] <= 'z' {
			parts[i] = string(p[0]-32) + p[1:]
		}
	}
	return strings.Join(parts, " ")
}

var schemaURIs = []string{
	"http://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft/2020-12/schema",
}

// appendSchema writes s as an object schema; t, when not nil, supplies the
// definitions of a top-level schema.
func (g *gen) appendSchema(b []byte, s *schema, t *tool) []byte {
	b = append(b, '{')
	n := len(b)
	sep := func(b []byte) []byte {
		if len(b) > n {
			return comma(b)
		}
		return b
	}
	if s.deco&sdNoType == 0 {
		b = appendKey(b, "type")
		if s.deco&sdEnumDef != 0 {
			b = appendString(b, "string", escPlain)
			b = appendKey(comma(b), "enum")
			return append(g.appendEnum(b, pick(g, enums)), '}')
		}
		b = appendString(b, "object", escPlain)
	}
	if s.shadow {
		b = appendKey(sep(b), "properties")
		b = g.appendMembers(b, s.shadowP)
	}
	switch s.propsKind {
	case kObject:
		b = appendKey(sep(b), "properties")
		b = g.appendMembers(b, s.props)
	case kArray:
		// The list-of-parameters layout some servers send.
		b = appendKey(sep(b), "properties")
		b = append(b, '[')
		for i := range s.props {
			if i > 0 {
				b = comma(b)
			}
			m := &s.props[i]
			b = append(b, '{')
			b = appendKey(b, "name")
			b = appendString(b, m.name, escPlain)
			b = appendKey(comma(b), "type")
			b = appendString(b, m.typ, escPlain)
			if m.descKind == kString {
				b = appendKey(comma(b), "description")
				b = appendString(b, m.desc, escPlain)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	case kNull:
		b = appendKey(sep(b), "properties")
		b = append(b, "null"...)
	case kString:
		b = appendKey(sep(b), "properties")
		b = appendString(b, "object", escPlain)
	}
	switch s.reqKind {
	case kArray:
		b = appendKey(sep(b), "required")
		b = append(b, '[')
		for i, r := range s.req {
			if i > 0 {
				b = comma(b)
			}
			b = g.appendNonString(b, r.kind, r.name, r.style)
		}
		b = append(b, ']')
	case kString:
		b = appendKey(sep(b), "required")
		b = appendString(b, firstReq(s), escPlain)
	case kObject:
		b = appendKey(sep(b), "required")
		b = append(b, '{')
		b = appendKey(b, firstReq(s))
		b = append(b, "true}"...)
	case kBool:
		b = appendKey(sep(b), "required")
		b = append(b, "true"...)
	}
	if s.deco&sdAllOf != 0 {
		b = appendKey(sep(b), "allOf")
		b = append(b, '[', '{')
		b = appendKey(b, "properties")
		b = append(g.appendNestedMembers(b), '}', ']')
	}
	if t != nil {
		for i := range t.defs {
			b = g.appendDefs(sep(b), &t.defs[i])
		}
	}
	if s.deco&sdAdditional != 0 {
		b = appendKey(sep(b), "additionalProperties")
		b = append(b, "false"...)
	}
	if s.deco&sdSchemaURI != 0 {
		b = appendKey(sep(b), "$schema")
		b = appendString(b, pick(g, schemaURIs), escPlain)
	}
	return append(b, '}')
}

func firstReq(s *schema) string {
	if len(s.req) > 0 {
		return s.req[0].name
	}
	if len(s.props) > 0 {
		return s.props[0].name
	}
	return "id"
}

// appendNonString writes a value of the given kind: the string itself for
// kString, else a value of that kind.
func (g *gen) appendNonString(b []byte, kind uint8, str string, style uint8) []byte {
	switch kind {
	case kString:
		return appendString(b, str, style)
	case kNull:
		return append(b, "null"...)
	case kNumber:
		return appendInt(b, g.intn(3))
	case kBool:
		return append(b, pick(g, []string{"true", "false"})...)
	case kArray:
		b = append(b, '[')
		if str != "" {
			b = appendString(b, str, escPlain)
		}
		return append(b, ']')
	case kObject:
		b = append(b, '{')
		if str != "" {
			b = appendKey(b, "name")
			b = appendString(b, str, escPlain)
		}
		return append(b, '}')
	}
	panic("synth: bad value kind")
}

func (g *gen) appendDefs(b []byte, blk *defsBlock) []byte {
	b = appendKey(b, blk.key)
	if blk.kind != kObject {
		b = append(b, '[')
		for i := range blk.entries {
			if i > 0 {
				b = comma(b)
			}
			b = g.appendSchema(b, &blk.entries[i].s, nil)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for i := range blk.entries {
		e := &blk.entries[i]
		if i > 0 {
			b = comma(b)
		}
		b = appendKey(b, e.name)
		if e.kind == kObject {
			b = g.appendSchema(b, &e.s, nil)
		} else {
			b = g.appendNonString(b, e.kind, "", escPlain)
		}
	}
	return append(b, '}')
}

func (g *gen) appendMembers(b []byte, ms []member) []byte {
	b = append(b, '{')
	for i := range ms {
		if i > 0 {
			b = comma(b)
		}
		b = g.appendMember(b, &ms[i])
	}
	return append(b, '}')
}

var (
	enums = [][]string{
		{"asc", "desc"}, {"json", "csv", "markdown"}, {"open", "closed", "all"},
		{"day", "week", "month", "year"}, {"GET", "POST", "PUT", "DELETE"},
		{"low", "medium", "high"}, {"text", "html"}, {"USD", "EUR", "GBP", "JPY"},
	}
)

func (g *gen) appendEnum(b []byte, values []string) []byte {
	b = append(b, '[')
	for i, e := range values {
		if i > 0 {
			b = comma(b)
		}
		b = appendString(b, e, escPlain)
	}
	return append(b, ']')
}

// appendMember writes one "name": {schema} member of a properties object.
func (g *gen) appendMember(b []byte, m *member) []byte {
	b = appendString(b, m.name, m.style)
	b = append(b, ':', ' ')
	if m.kind != kObject {
		return g.appendNonString(b, m.kind, m.typ, escPlain)
	}
	b = append(b, '{')
	if m.deco&decoRef != 0 {
		b = appendKey(b, "$ref")
		b = appendString(b, m.ref, escPlain)
		if m.descKind == kString {
			b = appendKey(comma(b), "description")
			b = appendString(b, m.desc, m.descStyle)
		}
		return append(b, '}')
	}
	if m.deco&decoAnyOf != 0 {
		// An optional object, the way pydantic writes one: the branches
		// carry the types.
		b = appendKey(b, "anyOf")
		b = append(b, '[', '{')
		b = appendKey(b, "type")
		b = appendString(b, "object", escPlain)
		b = appendKey(comma(b), "properties")
		b = g.appendNestedMembers(b)
		b = append(b, "}, {"...)
		b = appendKey(b, "type")
		b = append(b, `"null"}]`...)
	} else {
		b = appendKey(b, "type")
		b = appendString(b, m.typ, escPlain)
	}
	if m.deco&decoNested != 0 {
		// Before the description, so that a "properties" key never follows
		// a closing brace except in the duplicate-key corner.
		b = appendKey(comma(b), "properties")
		b = g.appendNestedMembers(b)
	}
	if m.desc0Kind != kAbsent {
		b = appendKey(comma(b), "description")
		b = g.appendNonString(b, m.desc0Kind, m.desc0, escPlain)
	}
	if m.descKind != kAbsent {
		b = appendKey(comma(b), "description")
		b = g.appendNonString(b, m.descKind, m.desc, m.descStyle)
	}
	var enum []string
	if m.deco&decoEnum != 0 {
		enum = pick(g, enums)
		b = appendKey(comma(b), "enum")
		b = g.appendEnum(b, enum)
	}
	if m.deco&decoFormat != 0 {
		// A corner may have renamed the property since.
		if f := formatOf(m.name); f != "" {
			b = appendKey(comma(b), "format")
			b = appendString(b, f, escPlain)
		}
	}
	if m.deco&decoMinMax != 0 {
		b = appendKey(comma(b), "minimum")
		b = appendInt(b, g.intn(2))
		b = appendKey(comma(b), "maximum")
		b = appendInt(b, pick(g, []int{10, 50, 100, 250, 1000}))
	}
	switch {
	case m.deco&decoNaN != 0:
		b = append(appendKey(comma(b), "default"), "NaN"...)
	case m.deco&decoInf != 0:
		b = append(appendKey(comma(b), "maximum"), "Infinity"...)
	case m.deco&decoNegInf != 0:
		b = append(appendKey(comma(b), "minimum"), "-Infinity"...)
	case m.deco&decoDefault != 0:
		b = appendKey(comma(b), "default")
		switch m.typ {
		case "number", "integer":
			b = appendInt(b, pick(g, []int{0, 1, 5, 10, 20, 50, 100}))
		case "boolean":
			b = append(b, pick(g, []string{"true", "false"})...)
		default:
			if enum == nil {
				enum = []string{""}
			}
			b = appendString(b, enum[0], escPlain)
		}
	}
	if m.deco&decoItems != 0 {
		b = appendKey(comma(b), "items")
		b = append(b, '{')
		b = appendKey(b, "type")
		b = appendString(b, pick(g, []string{"string", "string", "number", "integer"}), escPlain)
		b = append(b, '}')
	}
	if m.deco&decoItemsObject != 0 {
		b = appendKey(comma(b), "items")
		b = append(b, '{')
		b = appendKey(b, "type")
		b = appendString(b, "object", escPlain)
		b = appendKey(comma(b), "properties")
		b = append(g.appendNestedMembers(b), '}')
	}
	if m.deco&decoDraft3Req != 0 {
		b = append(appendKey(comma(b), "required"), "true"...)
	}
	return append(b, '}')
}

// appendNestedMembers writes a properties object below the enumerated level.
// Its members come from the label pools, so that a decoder that enumerates
// too deep counts visibly too much.
func (g *gen) appendNestedMembers(b []byte) []byte {
	b = append(b, '{')
	for i := range 1 + g.intn(3) {
		if i > 0 {
			b = comma(b)
		}
		e := &g.v.props[g.pickPool(g.v.pools[g.intn(len(g.v.pools))])]
		b = appendString(b, e.name, escPlain)
		b = append(b, ':', ' ', '{')
		b = appendKey(b, "type")
		b = appendString(b, e.typ, escPlain)
		if e.desc != "" {
			b = appendKey(comma(b), "description")
			b = appendString(b, e.desc, escPlain)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendDecoySchema writes an input_schema that loses to inputSchema: its
// properties must not be counted.
func (g *gen) appendDecoySchema(b []byte) []byte {
	b = append(b, '{')
	b = appendKey(b, "type")
	b = appendString(b, "object", escPlain)
	b = appendKey(comma(b), "properties")
	b = g.appendNestedMembers(b)
	return append(b, '}')
}
