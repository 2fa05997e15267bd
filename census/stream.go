package census

// Streaming a record's tools.
//
// Decode materialises every tool and property of a line at once: for a
// server of tens of thousands of tools that is several times the line.
// Stream and Next give the same tools one at a time, in two passes. The
// first validates the whole line, every byte, with the same scanners as
// Decode (so it fails exactly where and how Decode fails), but records of
// the tools only where their winning value lies in the line: the byte
// offset of the last "tools" array, of the last "tool" object, or of the
// last inputSchema and input_schema of a flat record. Only once the line is
// known to be valid and the record's shape settled does the second pass
// decode the tools, one per Next, with Decode's own parsers, into memory
// reused from tool to tool. A line that fails at its last byte, or whose
// later duplicate "tools" key replaces the list, therefore yields no tool
// at all, as json.loads yields no record.

// streamAbove is the line length from which Stream takes two passes; below
// it, one Decode is faster and its arenas stay small.
const streamAbove = 1 << 20

// headAcc collects the record's interesting keys in the first pass: value
// offsets in the line instead of decoded values.
type headAcc struct {
	isObject         bool
	name, desc       []byte
	hasName, hasDesc bool
	schema, alt      span // inputSchema, input_schema: kind and offset a
	tools            span // the last "tools": kind and offset a of its '['
	toolsBad         int
	tool             span // the last "tool": kind and offset a of its '{'
	sid              [4]sidVal
	raw              []byte // the record object's text, the flat tool's Raw
}

// streamState is where Next stands in the record Stream returned.
type streamState struct {
	whole   []Tool // the tools of a line decoded in one pass
	twoPass bool
	done    bool
	p       int // in two passes: the next tools element, or the tool's '{'
	bufMark int // buf below it holds the record's strings
	flat    headAcc
}

// Stream decodes one line for its record, as Decode does, but leaves its
// Tools nil: Next yields them one at a time. Errors are exactly Decode's,
// and they come before any tool: the whole line is validated first. For a
// long line the tools are never all in memory at once, only the one Next
// returned last. The Record and every byte slice in it stay valid until the
// next Stream or Decode, a Tool until the next Next; line must not change
// meanwhile.
func (d *Decoder) Stream(line []byte) (*Record, error) {
	return d.stream(line, len(line) >= streamAbove)
}

func (d *Decoder) stream(line []byte, twoPass bool) (*Record, error) {
	d.st = streamState{done: true}
	if !twoPass {
		rec, err := d.Decode(line)
		if err != nil {
			return nil, err
		}
		d.st.whole, d.st.done = rec.Tools, false
		rec.Tools = nil
		return rec, nil
	}
	d.reset(line)
	var h headAcc
	if err := d.parseHead(&h); err != nil {
		if uerr := checkUTF8(d.data); uerr != nil {
			return nil, uerr
		}
		return nil, err
	}
	rec, err := d.finishHead(&h)
	if err != nil {
		return nil, err
	}
	d.st.twoPass, d.st.done, d.st.bufMark = true, false, len(d.buf)
	switch rec.Shape {
	case ShapeServer:
		var empty bool
		d.st.p, empty = d.arrOpen(h.tools.a)
		d.st.done = empty
	case ShapeTool:
		d.st.p = h.tool.a
	case ShapeFlat:
		d.st.flat = h
	}
	return rec, nil
}

// Next returns the record's next tool, or nil after the last one. The
// error can only be a decoder fault: Stream has validated the line.
func (d *Decoder) Next() (*Tool, error) {
	st := &d.st
	if st.done {
		return nil, nil
	}
	if !st.twoPass {
		if len(st.whole) == 0 {
			st.done = true
			return nil, nil
		}
		t := &st.whole[0]
		st.whole = st.whole[1:]
		return t, nil
	}
	// The previous tool's properties and strings are no longer needed.
	d.out, d.buf, d.tools = d.out[:0], d.buf[:st.bufMark], d.tools[:0]
	switch d.rec.Shape {
	case ShapeServer:
		p, err := d.tool(st.p, 2)
		if err != nil {
			return nil, err
		}
		if st.p, st.done, err = d.arrNext(p); err != nil {
			return nil, err
		}
	case ShapeTool:
		if _, err := d.tool(st.p, 1); err != nil {
			return nil, err
		}
		st.done = true
	default:
		if err := d.flatTool(&st.flat); err != nil {
			return nil, err
		}
		st.done = true
	}
	return &d.tools[0], nil
}

// flatTool decodes the tool a flat record is, from the offsets of its
// schema values recorded in the first pass.
func (d *Decoder) flatTool(h *headAcc) error {
	t := toolAcc{name: h.name, desc: h.desc, hasName: h.hasName, hasDesc: h.hasDesc, raw: h.raw}
	// tool_schema's choice, made on the kinds alone: only the winner is
	// decoded.
	s := h.schema
	if s.kind == kAbsent || s.kind == kNull {
		s = h.alt
	}
	t.schema = span{kind: s.kind}
	if s.kind == kMatch {
		a, b, end, err := d.schema(s.a, 1)
		if err != nil {
			return err
		}
		t.schema, t.schemaRaw = span{kMatch, a, b}, d.data[s.a:end:end]
	}
	d.tools = append(d.tools, d.finishTool(&t))
	return nil
}

// parseHead is parse for the first pass.
func (d *Decoder) parseHead(h *headAcc) error {
	data := d.data
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		return synErr(0, msgBOM)
	}
	*h = headAcc{toolsBad: -1}
	p, err := d.recordHead(skipWS(data, 0), h)
	if err != nil {
		return err
	}
	if p = skipWS(data, p); p != len(data) {
		return synErr(p, msgExtra)
	}
	return nil
}

// recordHead is record for the first pass: the tools and schemas are
// validated and their offsets kept, nothing of them is built.
func (d *Decoder) recordHead(p int, h *headAcc) (int, error) {
	data := d.data
	if p >= len(data) || data[p] != '{' {
		return d.skipValue(p, 0)
	}
	h.isObject = true
	const own = 1
	start := p
	p, done := d.objOpen(p)
	for !done {
		key, q, err := d.key(p, false)
		if err != nil {
			return q, err
		}
		p = q
		switch string(key) {
		case "tools":
			if p < len(data) && data[p] == '[' {
				h.tools = span{kind: kMatch, a: p}
				p, h.toolsBad, err = d.skimList(p, own)
			} else {
				h.tools = span{kind: kOther}
				p, err = d.skipValue(p, own)
			}
		case "tool":
			h.tool = span{kind: kOther}
			if p < len(data) && data[p] == '{' {
				h.tool = span{kind: kMatch, a: p}
			}
			p, err = d.skipValue(p, own)
		case "server_id":
			p, err = d.serverID(p, own, &h.sid[0])
		case "server":
			p, err = d.serverID(p, own, &h.sid[1])
		case "server_url":
			p, err = d.serverID(p, own, &h.sid[2])
		case "url":
			p, err = d.serverID(p, own, &h.sid[3])
		case "name":
			p, err = d.optString(p, own, &h.name, &h.hasName)
		case "description":
			p, err = d.optString(p, own, &h.desc, &h.hasDesc)
		case "inputSchema":
			p, err = d.skimSchema(p, own, &h.schema)
		case "input_schema":
			p, err = d.skimSchema(p, own, &h.alt)
		default:
			p, err = d.skipValue(p, own)
		}
		if err != nil {
			return p, err
		}
		if p, done, err = d.objNext(p); err != nil {
			return p, err
		}
	}
	h.raw = data[start:p:p]
	return p, nil
}

// skimList validates the "tools" array at p and returns the index of its
// first element that is not an object (-1 if none), as toolList does.
func (d *Decoder) skimList(p, depth int) (int, int, error) {
	data := d.data
	own := depth + 1
	bad := -1
	p, done := d.arrOpen(p)
	var err error
	for i := 0; !done; i++ {
		if bad < 0 && (p >= len(data) || data[p] != '{') {
			bad = i
		}
		if p, err = d.skipValue(p, own); err != nil {
			return p, bad, err
		}
		if p, done, err = d.arrNext(p); err != nil {
			return p, bad, err
		}
	}
	return p, bad, nil
}

// skimSchema validates a flat record's schema value and records its kind
// and offset, as schemaValue would classify it.
func (d *Decoder) skimSchema(p, depth int, s *span) (int, error) {
	*s = span{kind: kOther}
	if p < len(d.data) {
		switch d.data[p] {
		case '{':
			*s = span{kind: kMatch, a: p}
		case 'n':
			*s = span{kind: kNull}
		}
	}
	return d.skipValue(p, depth)
}

// finishHead is finish for the first pass: the same shapes, server id and
// errors, with the tools left to Next.
func (d *Decoder) finishHead(h *headAcc) (*Record, error) {
	return d.shape(h.isObject, &h.sid, h.tools.kind, h.tool.kind, h.toolsBad)
}
