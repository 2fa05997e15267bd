package census

import "unsafe"

// A read-only view of the decoder's tape of one tool's input schema, for
// readers of the whole schema (the sensitivity analysis's deep walk) that
// would otherwise lex Tool.Schema's text a second time. The tape holds
// what CPython's json.loads makes of the text: each object's members once
// per name, the last of equal names (in name order, not text order), each
// name decoded; strings and numbers as ranges of the line.

// Tape is the tape of the line a Decoder is on. The zero value has no
// nodes. It is valid until the decoder's next Decode or Stream.
type Tape struct {
	data, keys []byte
	items      []canonItem
}

// TapeNode is one value on a Tape.
type TapeNode int32

// SchemaTape returns the tape of t's input schema when the decoder taped
// t (ok), which it does for most tools of lines shorter than a few MB; ok is
// false where t has no tape (a tool the decoder took from memory, a long
// line, a flat record, a decoder that stopped taping because nothing read
// its tapes) or its decoder is on another line, and where t.Schema is nil.
// The schema is the one Tool.Schema holds: inputSchema unless it is absent
// or null, then input_schema.
func (t *Tool) SchemaTape() (tp Tape, n TapeNode, ok bool) {
	d := t.tape.d
	if d == nil || d.tapeGen != t.tape.gen || t.Schema == nil {
		return Tape{}, 0, false
	}
	src := &d.tc
	line := src.lx.data
	if len(t.Raw) == 0 || t.Offset < 0 || t.Offset+len(t.Raw) > len(line) || unsafe.SliceData(t.Raw) != &line[t.Offset] {
		return Tape{}, 0, false
	}
	tp = Tape{data: line, keys: src.keys, items: src.done}
	tool := &tp.items[t.tape.at-1]
	if tool.kind != kindObject {
		return Tape{}, 0, false
	}
	in, alias := -1, -1
	for i := tool.a; i < tool.b; i++ {
		switch string(tp.Key(TapeNode(i))) {
		case "inputSchema":
			in = int(i)
		case "input_schema":
			alias = int(i)
		}
	}
	if in < 0 || tp.isNull(TapeNode(in)) {
		in = alias
	}
	if in < 0 || tp.items[in].kind != kindObject {
		return Tape{}, 0, false
	}
	return tp, TapeNode(in), true
}

// isNull reports whether n is the literal null.
func (tp *Tape) isNull(n TapeNode) bool {
	it := &tp.items[n]
	return it.kind == kindRaw && it.b-it.a == 4 && tp.data[it.a] == 'n'
}

// IsObject reports whether n is a JSON object.
func (tp *Tape) IsObject(n TapeNode) bool { return tp.items[n].kind == kindObject }

// IsArray reports whether n is a JSON array.
func (tp *Tape) IsArray(n TapeNode) bool { return tp.items[n].kind == kindArray }

// Children returns the nodes from, from+1, ..., to-1 that n holds: an
// array's elements in order, or an object's members, one for each name
// (the last of equal names), in the order of their names. A member node is
// the member's value; Key gives its name. Other nodes hold none.
func (tp *Tape) Children(n TapeNode) (from, to TapeNode) {
	it := &tp.items[n]
	if it.kind != kindObject && it.kind != kindArray {
		return 0, 0
	}
	return TapeNode(it.a), TapeNode(it.b)
}

// Key returns the decoded name of the member n (empty for an array
// element). It aliases the tape.
func (tp *Tape) Key(n TapeNode) []byte {
	it := &tp.items[n]
	if it.kesc {
		return tp.keys[it.ka:it.kb]
	}
	return tp.data[it.ka:it.kb]
}

// IsString reports whether n is a JSON string.
func (tp *Tape) IsString(n TapeNode) bool {
	it := &tp.items[n]
	return it.kind == kindString || it.kind == kindRaw && tp.data[it.a] == '"'
}

// String returns the decoded string n, into *buf when it holds escapes
// (else aliasing the line), and false when n is not a string.
func (tp *Tape) String(n TapeNode, buf *[]byte) ([]byte, bool) {
	it := &tp.items[n]
	switch it.kind {
	case kindString:
		*buf = appendUnescaped((*buf)[:0], tp.data[it.a+1:it.b-1])
		return *buf, true
	case kindRaw:
		if tp.data[it.a] == '"' {
			return tp.data[it.a+1 : it.b-1], true
		}
	}
	return nil, false
}
