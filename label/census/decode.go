package census

// How the fast decoder works.
//
// It reads the line once, left to right, and validates every byte as CPython
// would (UTF-8 included: the string scanner checks every non-ASCII byte, as
// a valid line holds none outside strings), but builds values only along the
// paths the reference reads:
//
//	record → tools[] / tool → name, description, inputSchema / input_schema
//	       → properties, required, definitions, $defs
//	       → their entries' properties and required
//	       → each property's description
//
// Everything else goes through skipValue, an iterative validator that
// materialises nothing and cannot overflow the stack.
//
// Duplicate keys keep the last value at the first position. Each interesting
// key is therefore parsed where it occurs and its result recorded as a span
// of the decoder's arenas; a later duplicate simply records a new span, and
// the spans are put together when the enclosing object closes. Properties
// are written straight into the output arena in text order; only when a
// schema's parts arrive out of the enumeration order (say "$defs" before
// "properties", or a duplicate "properties") are they copied into place.

// retainItems (entries) and retainBytes cap the arenas a Decoder keeps
// between lines: one huge line must not pin its memory for the rest of the
// run.
const (
	retainItems = 1 << 16
	retainBytes = 8 << 20
)

// Decoder decodes census lines. It reuses its memory from line to line, so
// after the first few lines Decode does not allocate; give each goroutine
// its own.
//
// Its memory grows with the line being decoded: the unescaped strings (no
// more than the line), 80 bytes per property and per tool, an index for any
// object of more than 16 properties or definitions. That is well under the
// line's own size for real schemas; the worst case, a line of nothing but
// tiny distinct property names, costs about 25 times the line. The tape of
// the line's tools (decode_tape.go) adds 32 bytes a token, up to 16 times
// a line, for lines shorter than 1 MiB only. Arenas larger
// than 64K entries or 8 MiB are released at the next call, so that one huge
// line does not keep its arenas for the rest of the run; Stream keeps them
// to one tool's worth on long lines. Between calls the arenas may still
// refer to the buffers of recent lines, but never read them again. The zero
// value is ready to use.
type Decoder struct {
	lx    Lexer      // the line being decoded
	buf   []byte     // unescaped strings that are returned
	kbuf  []byte     // unescaped keys that are only compared
	out   []Property // every property materialised for the line
	tools []Tool
	reqs  [][]byte   // required names of the schema being parsed
	defs  []defEntry // definitions / $defs entries of the schema being parsed
	segs  []segment  // a schema's property runs, in enumeration order
	acc   recAcc     // the record's interesting keys
	rec   Record
	st    streamState // where Next stands
	head  bool        // record notes where the tools sit instead of building them

	propIdx byteMap // property names of a large properties object; large required lists
	defIdx  byteMap // keys of a large definitions / $defs object

	memo toolMemo // tool texts seen, when remembering

	// The canonicaliser's tape of the line's tools, recorded as they
	// are parsed (decode_tape.go).
	tc      canonicalizer
	tapeOn  bool   // the line is short enough to tape
	noTape  bool   // tape no line (for tests and benchmarks)
	taping  bool   // the tool being parsed is being taped
	tapeMax int    // the most containers the tool's tape may open
	tapeGen uint64 // counts lines: a Tool's tape is of the line it names
	tapeUse tapeUse
}

// NewDecoder returns a Decoder with empty arenas, the same as new(Decoder).
func NewDecoder() *Decoder {
	return &Decoder{}
}

// kind records what the last value of an interesting key was.
type kind uint8

const (
	kAbsent kind = iota // key not seen
	kNull               // JSON null (tool_schema falls back on it)
	kMatch              // the type the reference wants there
	kOther              // any other value
)

// span is the last value of an interesting key: its kind and, for kMatch,
// the range it produced in one of the arenas.
type span struct {
	kind kind
	a, b int
}

// defEntry is one key of a definitions or $defs object.
type defEntry struct {
	key   []byte
	kind  kind // kMatch when the value is an object
	props span // its last "properties", a range of out
	req   span // its last "required", a range of reqs
}

// segment is a run of properties of out with the required list that applies.
type segment struct {
	a, b int
	req  span
}

// schemaAcc collects the interesting keys of one input schema.
type schemaAcc struct {
	props span    // range of out
	req   span    // range of reqs
	defs  [2]span // definitions, $defs: ranges of defs
}

// toolAcc collects the interesting keys of one tool object.
type toolAcc struct {
	name, desc        []byte
	hasName, hasDesc  bool
	schema, alt       span   // inputSchema, input_schema: ranges of out
	schemaRaw, altRaw []byte // their text, when objects
	raw               []byte // the tool object's text
	offset            int    // where raw starts in the line
}

// recAcc collects the interesting keys of the record object. When the
// decoder walks a record only for where its tools sit (Stream's first pass
// over a long line), the tools arena stays empty and the offsets say where
// the winning values lie; the flat tool's schema spans then hold the offset
// of their value in a.
type recAcc struct {
	isObject bool
	flat     toolAcc // the record read as a tool, for ShapeFlat
	tools    span    // range of the tools arena
	toolsBad int     // first element of the last "tools" that is not an object
	tool     span    // index of the "tool" value in the tools arena
	toolsAt  int     // offset of the last "tools" list's '['
	toolAt   int     // offset of the last "tool" object's '{'
	sid      [4]sidVal
}

// sidVal is the last value of one server id alias.
type sidVal struct {
	kind kind // kMatch for a string or an integer
	val  []byte
}

// Decode decodes one line, given without its trailing newline. The Record
// and every byte slice in it stay valid only until the next call; they may
// alias line, which the caller must not change meanwhile. A line Python's
// json would reject gives a *SyntaxError, a line the reference's tools_of
// would reject a *RecordError. Call IsBlank first: the reference skips blank
// lines, while Decode reports them as errors.
func (d *Decoder) Decode(line []byte) (*Record, error) {
	d.reset(line)
	return d.decode()
}

func (d *Decoder) reset(line []byte) {
	d.lx.Reset(line)
	d.tapeReset(line)
	d.st.done = true
	d.buf = retain(d.buf, retainBytes)
	d.kbuf = retain(d.kbuf, retainBytes)
	d.segs = retain(d.segs, retainItems)
	d.out = retain(d.out, retainItems)
	d.tools = retain(d.tools, retainItems)
	d.reqs = retain(d.reqs, retainItems)
	d.defs = retain(d.defs, retainItems)
	d.propIdx.trim(retainItems)
	d.defIdx.trim(retainItems)
	if d.memo.full {
		d.memo.clear()
	}
}

// retain empties an arena for the next line, dropping it when it has grown
// past max.
func retain[S ~[]E, E any](s S, max int) S {
	if cap(s) > max {
		return nil
	}
	return s[:0]
}

func (d *Decoder) decode() (*Record, error) {
	if err := d.parse(); err != nil {
		return nil, d.lineErr(err)
	}
	return d.finish(&d.acc)
}

// lineErr is the error Python gives for a line that failed to parse with
// err. Python decodes the whole line before json sees it, so invalid UTF-8
// anywhere outranks a syntax error before it. A line that parses needs no
// such pass: the scanner checked the UTF-8 of every string, and any
// non-ASCII byte elsewhere is a syntax error.
func (d *Decoder) lineErr(err error) error {
	if uerr := checkUTF8(d.lx.data); uerr != nil {
		return uerr
	}
	return err
}

// parse validates the line and collects its interesting keys in acc.
func (d *Decoder) parse() error {
	data := d.lx.data
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		return synErr(0, msgBOM)
	}
	d.acc = recAcc{toolsBad: -1}
	p, err := d.record(skipWS(data, 0), &d.acc)
	if err != nil {
		return err
	}
	if p = skipWS(data, p); p != len(data) {
		return synErr(p, msgExtra)
	}
	return nil
}

// finish applies tools_of and server_id to the collected keys. It runs only
// after the whole line was validated, because json.loads fails before
// tools_of ever sees a record.
func (d *Decoder) finish(r *recAcc) (*Record, error) {
	rec, err := d.shape(r)
	if err != nil {
		return nil, err
	}
	switch rec.Shape {
	case ShapeServer:
		rec.Tools = d.tools[r.tools.a:r.tools.b:r.tools.b]
	case ShapeTool:
		rec.Tools = d.tools[r.tool.a:r.tool.b:r.tool.b]
	default:
		d.tools = append(d.tools, d.finishTool(&r.flat))
		n := len(d.tools)
		rec.Tools = d.tools[n-1 : n : n]
	}
	return rec, nil
}

// shape is tools_of and server_id on what the parse collected: the
// record's shape and server id, or the RecordError the reference raises.
// Both passes of a streamed record and the one pass of Decode share it, so
// that they fail alike.
func (d *Decoder) shape(r *recAcc) (*Record, error) {
	if !r.isObject {
		return nil, &RecordError{Msg: msgNotObject}
	}
	rec := &d.rec
	*rec = Record{}
	for i := range r.sid {
		if r.sid[i].kind == kMatch {
			rec.ServerID, rec.HasServerID = r.sid[i].val, true
			break
		}
	}
	switch {
	case r.tools.kind != kAbsent:
		if r.tools.kind != kMatch {
			return nil, &RecordError{Msg: msgToolsList}
		}
		if r.toolsBad >= 0 {
			return nil, &RecordError{Msg: toolsElemMsg(r.toolsBad)}
		}
		rec.Shape = ShapeServer
	case r.tool.kind != kAbsent:
		if r.tool.kind != kMatch {
			return nil, &RecordError{Msg: msgToolObject}
		}
		rec.Shape = ShapeTool
	default:
		rec.Shape = ShapeFlat
	}
	return rec, nil
}

// record parses the line's top-level value. Every function below takes p at
// the start of a value and the depth of the container holding it (0 for
// the top level) and returns the index just past the value. When d.head is
// set (Stream's first pass) the tools are validated but not built: record
// notes where they sit, and Next builds them one at a time.
func (d *Decoder) record(p int, r *recAcc) (int, error) {
	data := d.lx.data
	if p >= len(data) || data[p] != '{' {
		return d.lx.Skip(p, 0)
	}
	r.isObject = true
	const own = 1
	start := p
	p, done := d.lx.ObjOpen(p)
	for !done {
		key, q, err := d.key(p, false)
		if err != nil {
			return q, err
		}
		p = q
		switch string(key) {
		case "tools":
			if p < len(data) && data[p] == '[' {
				a := len(d.tools)
				r.toolsAt = p
				p, r.toolsBad, err = d.toolList(p, own)
				r.tools = span{kMatch, a, len(d.tools)}
			} else {
				p, err = d.lx.Skip(p, own)
				r.tools = span{kind: kOther}
			}
		case "tool":
			if p < len(data) && data[p] == '{' {
				r.toolAt = p
				if d.head {
					p, err = d.lx.Skip(p, own)
					r.tool = span{kind: kMatch}
				} else {
					p, err = d.tool(p, own)
					r.tool = span{kMatch, len(d.tools) - 1, len(d.tools)}
				}
			} else {
				p, err = d.lx.Skip(p, own)
				r.tool = span{kind: kOther}
			}
		case "server_id":
			p, err = d.serverID(p, own, &r.sid[0])
		case "server":
			p, err = d.serverID(p, own, &r.sid[1])
		case "server_url":
			p, err = d.serverID(p, own, &r.sid[2])
		case "url":
			p, err = d.serverID(p, own, &r.sid[3])
		default:
			p, err = d.toolField(key, p, own, &r.flat)
		}
		if err != nil {
			return p, err
		}
		if p, done, err = d.lx.ObjNext(p); err != nil {
			return p, err
		}
	}
	r.flat.raw, r.flat.offset = data[start:p:p], start
	return p, nil
}

// serverID records one server id alias: server_id() accepts a str or an
// int (not a bool, not a float) and passes over anything else.
func (d *Decoder) serverID(p, depth int, v *sidVal) (int, error) {
	data := d.lx.data
	if p < len(data) {
		switch c := data[p]; {
		case c == '"':
			end, esc, err := scanString(data, p)
			if err != nil {
				return end, err
			}
			*v = sidVal{kMatch, d.str(p, end, esc)}
			return end, nil
		case c == '-' || isDigit[c]:
			end, k, err := scanScalar(data, p)
			if err != nil {
				return end, err
			}
			if k != scalarInt {
				*v = sidVal{kind: kOther}
				return end, nil
			}
			// str(int) of the only non-canonical integer JSON allows.
			if end-p == 2 && data[p] == '-' && data[p+1] == '0' {
				p++
			}
			*v = sidVal{kMatch, data[p:end:end]}
			return end, nil
		}
	}
	*v = sidVal{kind: kOther}
	return d.lx.Skip(p, depth)
}

// toolList parses the value of "tools", a list, appending each object
// element to the tools arena. It returns the index of the first element that
// is not an object (-1 if none), which tools_of reports.
func (d *Decoder) toolList(p, depth int) (int, int, error) {
	data := d.lx.data
	own := depth + 1
	bad := -1
	p, done := d.lx.ArrOpen(p)
	var err error
	for i := 0; !done; i++ {
		if p < len(data) && data[p] == '{' {
			if d.head {
				p, err = d.lx.Skip(p, own)
			} else {
				p, err = d.tool(p, own)
			}
		} else {
			p, err = d.lx.Skip(p, own)
			if bad < 0 {
				bad = i
			}
		}
		if err != nil {
			return p, bad, err
		}
		if p, done, err = d.lx.ArrNext(p); err != nil {
			return p, bad, err
		}
	}
	return p, bad, nil
}

// tool parses a tool object and appends it to the tools arena; a
// remembering decoder takes a tool it has seen before from memory.
func (d *Decoder) tool(p, depth int) (int, error) {
	var key uint64
	var remember bool
	if d.memo.on {
		var e *memoTool
		var idx int
		if e, idx, key, remember = d.memo.lookup(d.lx.data, p, depth); e != nil {
			return d.recall(e, idx, p), nil
		}
	}
	own := depth + 1
	var t toolAcc
	start := p
	d.tapeStart(depth)
	p, done := d.objOpen(p)
	for !done {
		key, q, err := d.key(p, false)
		if err != nil {
			return q, err
		}
		if p, err = d.toolField(key, q, own, &t); err != nil {
			return p, err
		}
		if p, done, err = d.objNext(p); err != nil {
			return p, err
		}
	}
	t.raw, t.offset = d.lx.data[start:p:p], start
	d.tools = append(d.tools, d.finishTool(&t))
	if d.taping {
		d.tapeEnd(&d.tools[len(d.tools)-1])
	}
	if remember {
		d.memo.add(&d.tools[len(d.tools)-1], key, depth)
	}
	return p, nil
}

// toolField handles one member of a tool object (or of a record, which may
// be the tool itself).
func (d *Decoder) toolField(key []byte, p, depth int, t *toolAcc) (int, error) {
	switch string(key) {
	case "name":
		return d.optString(p, depth, &t.name, &t.hasName)
	case "description":
		return d.optString(p, depth, &t.desc, &t.hasDesc)
	case "inputSchema":
		return d.schemaValue(p, depth, &t.schema, &t.schemaRaw)
	case "input_schema":
		return d.schemaValue(p, depth, &t.alt, &t.altRaw)
	}
	return d.skip(p, depth)
}

// finishTool applies tool_schema: inputSchema unless it is absent or null,
// then input_schema; a schema that is not an object has no properties.
func (d *Decoder) finishTool(t *toolAcc) Tool {
	s, raw := t.schema, t.schemaRaw
	if s.kind == kAbsent || s.kind == kNull {
		s, raw = t.alt, t.altRaw
	}
	tool := Tool{Name: t.name, HasName: t.hasName, Description: t.desc, HasDescription: t.hasDesc, Raw: t.raw, Offset: t.offset}
	if s.kind == kMatch {
		tool.Schema = raw
	}
	if s.kind == kMatch && s.b > s.a {
		tool.Properties = d.out[s.a:s.b:s.b]
	}
	return tool
}

// optString parses a value that matters only when it is a string.
func (d *Decoder) optString(p, depth int, s *[]byte, ok *bool) (int, error) {
	data := d.lx.data
	if p < len(data) && data[p] == '"' {
		end, esc, err := scanString(data, p)
		if err != nil {
			return end, err
		}
		if d.taping {
			d.tapeString(p, end, esc)
		}
		*s, *ok = d.str(p, end, esc), true
		return end, nil
	}
	*s, *ok = nil, false
	return d.skip(p, depth)
}

// str returns the decoded string whose quotes are at q and end-1: a slice
// of the line when it has no escape, else a copy unescaped into buf.
func (d *Decoder) str(q, end int, esc bool) []byte {
	raw := d.lx.data[q+1 : end-1 : end-1]
	if !esc {
		return raw
	}
	a := len(d.buf)
	d.buf = appendUnescaped(d.buf, raw)
	return d.buf[a:len(d.buf):len(d.buf)]
}

// schemaValue parses the value of inputSchema or input_schema.
func (d *Decoder) schemaValue(p, depth int, s *span, raw *[]byte) (int, error) {
	data := d.lx.data
	*raw = nil
	if p < len(data) {
		switch data[p] {
		case '{':
			if d.head {
				// Stream's first pass: the offset, for flatTool.
				end, err := d.skip(p, depth)
				*s = span{kind: kMatch, a: p}
				return end, err
			}
			a, b, end, err := d.schema(p, depth)
			*s = span{kMatch, a, b}
			if err == nil {
				*raw = data[p:end:end]
			}
			return end, err
		case 'n':
			end, err := d.skip(p, depth)
			*s = span{kind: kNull} // "n" can only start null
			return end, err
		}
	}
	*s = span{kind: kOther}
	return d.skip(p, depth)
}

// schema parses an input schema object and returns the range of out that
// holds its properties in enumeration order.
func (d *Decoder) schema(p, depth int) (int, int, int, error) {
	data := d.lx.data
	own := depth + 1
	d.reqs = d.reqs[:0]
	d.defs = d.defs[:0]
	var s schemaAcc
	p, done := d.objOpen(p)
	for !done {
		key, q, err := d.key(p, false)
		if err != nil {
			return 0, 0, q, err
		}
		p = q
		switch string(key) {
		case "properties":
			if p < len(data) && data[p] == '{' {
				a := len(d.out)
				p, err = d.properties(p, own, WhereProperties, nil)
				s.props = span{kMatch, a, len(d.out)}
			} else {
				p, err = d.skip(p, own)
				s.props = span{kind: kOther}
			}
		case "required":
			p, err = d.requiredValue(p, own, &s.req)
		case "definitions":
			p, err = d.defsValue(p, own, WhereDefinitions, &s.defs[0])
		case "$defs":
			p, err = d.defsValue(p, own, WhereDefs, &s.defs[1])
		default:
			p, err = d.skip(p, own)
		}
		if err != nil {
			return 0, 0, p, err
		}
		if p, done, err = d.objNext(p); err != nil {
			return 0, 0, p, err
		}
	}
	a, b := d.assemble(&s)
	return a, b, p, nil
}

// assemble puts a schema's property runs in iter_properties order (the
// top-level properties, then definitions entries, then $defs entries), sets
// Required from each run's own required list, and returns the range of out
// that holds them.
func (d *Decoder) assemble(s *schemaAcc) (int, int) {
	segs := d.segs[:0]
	if s.props.kind == kMatch {
		segs = append(segs, segment{s.props.a, s.props.b, s.req})
	}
	for _, ds := range s.defs {
		if ds.kind != kMatch {
			continue
		}
		for _, e := range d.defs[ds.a:ds.b] {
			if e.kind == kMatch && e.props.kind == kMatch {
				segs = append(segs, segment{e.props.a, e.props.b, e.req})
			}
		}
	}
	d.segs = segs
	first, last, inPlace := -1, -1, true
	for _, sg := range segs {
		if sg.a == sg.b {
			continue
		}
		d.markRequired(sg)
		if first < 0 {
			first = sg.a
		} else if sg.a != last {
			inPlace = false
		}
		last = sg.b
	}
	if first < 0 {
		return 0, 0
	}
	if inPlace {
		return first, last
	}
	a := len(d.out)
	for _, sg := range segs {
		d.out = append(d.out, d.out[sg.a:sg.b]...)
	}
	return a, len(d.out)
}

// markRequired sets Required on a run of properties: the reference keeps the
// string elements of that schema's required list (when it is a list) and
// tests membership.
func (d *Decoder) markRequired(sg segment) {
	if sg.req.kind != kMatch || sg.req.a == sg.req.b {
		return
	}
	req := d.reqs[sg.req.a:sg.req.b]
	props := d.out[sg.a:sg.b]
	if len(req) <= linearMax || len(props) <= linearMax/4 {
		for i := range props {
			for _, r := range req {
				if string(r) == string(props[i].Name) {
					props[i].Required = true
					break
				}
			}
		}
		return
	}
	m := &d.propIdx
	m.reset(len(req))
	for i, r := range req {
		if _, ok := bmGet(m, r, reqNames(d.reqs)); !ok {
			m.put(r, sg.req.a+i)
		}
	}
	for i := range props {
		_, props[i].Required = bmGet(m, props[i].Name, reqNames(d.reqs))
	}
}

// properties parses a "properties" object into out, one Property per
// distinct name in first-occurrence order, each with its last value's
// description.
func (d *Decoder) properties(p, depth int, where WhereKind, defKey []byte) (int, error) {
	data := d.lx.data
	own := depth + 1
	start := len(d.out)
	hashed := false
	p, done := d.objOpen(p)
	for !done {
		name, q, err := d.key(p, true)
		if err != nil {
			return q, err
		}
		p = q
		var desc []byte
		if p < len(data) && data[p] == '{' {
			p, desc, err = d.propValue(p, own)
		} else {
			p, err = d.skip(p, own)
		}
		if err != nil {
			return p, err
		}
		hashed = lastWins((*propNames)(&d.out), &d.propIdx, start, hashed, name,
			Property{Name: name, Description: desc, Where: where, DefKey: defKey})
		if p, done, err = d.objNext(p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// propValue parses a property's schema object for its last "description".
func (d *Decoder) propValue(p, depth int) (int, []byte, error) {
	own := depth + 1
	var desc []byte
	p, done := d.objOpen(p)
	for !done {
		key, q, err := d.key(p, false)
		if err != nil {
			return q, nil, err
		}
		p = q
		if string(key) == "description" {
			var ok bool
			p, err = d.optString(p, own, &desc, &ok)
		} else {
			p, err = d.skip(p, own)
		}
		if err != nil {
			return p, nil, err
		}
		if p, done, err = d.objNext(p); err != nil {
			return p, nil, err
		}
	}
	return p, desc, nil
}

// requiredValue parses the value of "required": when it is a list, its
// string elements go to reqs.
func (d *Decoder) requiredValue(p, depth int, s *span) (int, error) {
	data := d.lx.data
	if p >= len(data) || data[p] != '[' {
		*s = span{kind: kOther}
		return d.skip(p, depth)
	}
	own := depth + 1
	a := len(d.reqs)
	p, done := d.arrOpen(p)
	var err error
	for !done {
		if p < len(data) && data[p] == '"' {
			end, esc, err := scanString(data, p)
			if err != nil {
				return end, err
			}
			if d.taping {
				d.tapeString(p, end, esc)
			}
			d.reqs = append(d.reqs, d.str(p, end, esc))
			p = end
		} else if p, err = d.skip(p, own); err != nil {
			return p, err
		}
		if p, done, err = d.arrNext(p); err != nil {
			return p, err
		}
	}
	*s = span{kMatch, a, len(d.reqs)}
	return p, nil
}

// defsValue parses the value of "definitions" or "$defs": when it is an
// object, its entries go to defs, one per distinct key in first-occurrence
// order holding the last value.
func (d *Decoder) defsValue(p, depth int, where WhereKind, s *span) (int, error) {
	data := d.lx.data
	if p >= len(data) || data[p] != '{' {
		*s = span{kind: kOther}
		return d.skip(p, depth)
	}
	own := depth + 1
	start := len(d.defs)
	hashed := false
	p, done := d.objOpen(p)
	for !done {
		key, q, err := d.key(p, true)
		if err != nil {
			return q, err
		}
		p = q
		e := defEntry{key: key, kind: kOther}
		if p < len(data) && data[p] == '{' {
			e.kind = kMatch
			p, err = d.defEntry(p, own, where, &e)
		} else {
			p, err = d.skip(p, own)
		}
		if err != nil {
			return p, err
		}
		hashed = lastWins((*defKeys)(&d.defs), &d.defIdx, start, hashed, key, e)
		if p, done, err = d.objNext(p); err != nil {
			return p, err
		}
	}
	*s = span{kMatch, start, len(d.defs)}
	return p, nil
}

// defEntry parses one object under definitions or $defs for its last
// "properties" and "required".
func (d *Decoder) defEntry(p, depth int, where WhereKind, e *defEntry) (int, error) {
	data := d.lx.data
	own := depth + 1
	p, done := d.objOpen(p)
	for !done {
		key, q, err := d.key(p, false)
		if err != nil {
			return q, err
		}
		p = q
		switch string(key) {
		case "properties":
			if p < len(data) && data[p] == '{' {
				a := len(d.out)
				p, err = d.properties(p, own, where, e.key)
				e.props = span{kMatch, a, len(d.out)}
			} else {
				p, err = d.skip(p, own)
				e.props = span{kind: kOther}
			}
		case "required":
			p, err = d.requiredValue(p, own, &e.req)
		default:
			p, err = d.skip(p, own)
		}
		if err != nil {
			return p, err
		}
		if p, done, err = d.objNext(p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// key parses a member name and its colon, returning the name and the start
// of the value. A name with escapes is decoded into buf when keep is set
// (it is returned to the caller), else into the scratch kbuf, valid only
// until the next key.
func (d *Decoder) key(p int, keep bool) ([]byte, int, error) {
	end, esc, v, err := d.lx.Key(p)
	if err != nil {
		return nil, v, err
	}
	if d.taping {
		d.tapeKey(p, end, esc)
	}
	data := d.lx.data
	var k []byte
	switch {
	case !esc:
		k = data[p+1 : end-1 : end-1]
	case keep:
		k = d.str(p, end, esc)
	default:
		d.kbuf = appendUnescaped(d.kbuf[:0], data[p+1:end-1])
		k = d.kbuf
	}
	return k, v, nil
}
