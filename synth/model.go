package synth

// The generator first builds a small model of each tool: what it will write,
// including every duplicate key and every value of the wrong type. The
// ground truth is read off this model by effective(), which follows the
// Python reference's semantics (json.loads keeps the last of duplicate keys
// at the position of the first; tool_schema, iter_properties and
// _schema_props decide what is enumerated). Nothing is decoded from the
// written bytes, so a writer bug shows up as a disagreement with the oracle
// instead of being copied into the truth.

// JSON value kinds: kObject where a schema expects an object, kArray where
// it expects a list, kString where it expects a string; anything else
// records what was written instead.
const (
	kAbsent uint8 = iota
	kObject
	kArray
	kString
	kNull
	kNumber
	kBool
)

// member is one entry of a "properties" object.
type member struct {
	name  string
	style uint8 // escaping of the key; the decoded key is name either way
	kind  uint8 // kObject, or the kind written in place of a property schema
	typ   string
	desc  string
	// descKind is the kind of the (last) "description" value; desc0Kind,
	// when not kAbsent, that of an earlier duplicate "description" key
	// (desc0 when it is a string).
	descKind  uint8
	desc0Kind uint8
	desc0     string
	descStyle uint8
	deco      uint32 // decorations that do not change what is enumerated
	ref       string // "$ref" target when deco has decoRef
}

// reqItem is one element of a "required" array.
type reqItem struct {
	name  string
	kind  uint8 // kString, or the kind of a non-string element
	style uint8
}

// schema is an object that may carry "properties" and "required": a tool's
// input schema or an entry of its definitions.
type schema struct {
	propsKind uint8
	props     []member
	// shadow is a "properties" object written before the effective one: a
	// duplicate key that Python's json discards.
	shadow  bool
	shadowP []member
	reqKind uint8
	req     []reqItem
	deco    uint32
}

// defEntry is one entry of a definitions or $defs object.
type defEntry struct {
	name string
	kind uint8 // kObject, or the kind of a non-object entry
	s    schema
}

// defsBlock is a "definitions" or "$defs" key of the input schema.
type defsBlock struct {
	key     string
	kind    uint8 // kObject, or kArray for a block that is not an object
	entries []defEntry
}

// Where the input schema sits in the tool object.
const (
	placeInput     uint8 = iota // "inputSchema": {...}
	placeSnake                  // "input_schema": {...}
	placeNullSnake              // "inputSchema": null, "input_schema": {...}
	placeBoth                   // "inputSchema": {...}, "input_schema": {a decoy}
	placeNone                   // no schema at all
	placeString                 // "inputSchema": "<the schema serialised as a string>"
	placeNullOnly               // "inputSchema": null and no alias
)

// tool is the model of one MCP tool object.
type tool struct {
	name      string
	nameKind  uint8
	desc      string
	descKind  uint8
	descStyle uint8
	place     uint8
	top       schema
	defs      []defsBlock
	deco      uint32
}

func (t *tool) reset() {
	t.name, t.desc = "", ""
	t.nameKind, t.descKind, t.descStyle, t.place, t.deco = kString, kString, escPlain, placeInput, 0
	t.top.reset()
	// Definition blocks are rare; they are allocated afresh each time.
	t.defs = t.defs[:0]
}

func (s *schema) reset() {
	s.propsKind, s.reqKind, s.shadow, s.deco = kObject, kAbsent, false, 0
	s.props, s.shadowP, s.req = s.props[:0], s.shadowP[:0], s.req[:0]
}

// effective calls fn for every property the Python reference enumerates,
// with the name, the description it reads and the required flag.
func (t *tool) effective(fn func(name, desc string, required bool)) {
	switch t.place {
	case placeInput, placeSnake, placeNullSnake, placeBoth:
	default:
		// No schema, or one that is not an object: nothing to enumerate.
		return
	}
	t.top.effective(fn)
	for _, key := range [...]string{"definitions", "$defs"} {
		// The last block with this key is the one json.loads keeps.
		var blk *defsBlock
		for i := range t.defs {
			if t.defs[i].key == key {
				blk = &t.defs[i]
			}
		}
		if blk == nil || blk.kind != kObject {
			continue
		}
		for i := range blk.entries {
			if e := &blk.entries[i]; e.kind == kObject {
				e.s.effective(fn)
			}
		}
	}
}

func (s *schema) effective(fn func(name, desc string, required bool)) {
	if s.propsKind != kObject {
		return
	}
	for i := range s.props {
		m := &s.props[i]
		if s.seenBefore(i) {
			continue
		}
		last := m
		for j := i + 1; j < len(s.props); j++ {
			if s.props[j].name == m.name {
				last = &s.props[j]
			}
		}
		fn(m.name, last.effectiveDesc(), s.requires(m.name))
	}
}

func (s *schema) seenBefore(i int) bool {
	for j := range i {
		if s.props[j].name == s.props[i].name {
			return true
		}
	}
	return false
}

// requires mirrors `name in [r for r in required if isinstance(r, str)]`,
// with required read only when it is a list.
func (s *schema) requires(name string) bool {
	if s.reqKind != kArray {
		return false
	}
	for _, r := range s.req {
		if r.kind == kString && r.name == name {
			return true
		}
	}
	return false
}

// effectiveDesc is the description _schema_props reads: the value of the
// last "description" key of an object property when it is a string, else "".
func (m *member) effectiveDesc() string {
	if m.kind == kObject && m.descKind == kString {
		return m.desc
	}
	return ""
}
