package census

// Streaming a record's tools.
//
// Decode materialises every tool and property of a line at once: for a
// server of tens of thousands of tools that is several times the line.
// Stream and Next give the same tools one at a time, in two passes. The
// first is Decode's own walk of the record (so it fails exactly where and
// how Decode fails) with the tools validated but not built: it records of
// them only where their winning value lies in the line: the byte
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

// streamState is where Next stands in the record Stream returned.
type streamState struct {
	whole   []Tool // the tools of a line decoded in one pass
	twoPass bool
	done    bool
	p       int // in two passes: the next tools element, or the tool's '{'
	bufMark int // buf below it holds the record's strings
	flat    toolAcc
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
	d.tapeOn = false // Next parses one tool at a time: its tape would not outlive it
	d.head = true
	err := d.parse()
	d.head = false
	if err != nil {
		return nil, d.lineErr(err)
	}
	r := &d.acc
	rec, err := d.shape(r)
	if err != nil {
		return nil, err
	}
	d.st.twoPass, d.st.done, d.st.bufMark = true, false, len(d.buf)
	switch rec.Shape {
	case ShapeServer:
		var empty bool
		d.st.p, empty = d.lx.ArrOpen(r.toolsAt)
		d.st.done = empty
	case ShapeTool:
		d.st.p = r.toolAt
	case ShapeFlat:
		d.st.flat = r.flat
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
	if d.memo.full {
		d.memo.clear()
	}
	// The first pass validated the line: what the tool's walk skips needs
	// only its end found, not every byte checked again.
	d.lx.validated = true
	defer func() { d.lx.validated = false }()
	switch d.rec.Shape {
	case ShapeServer:
		p, err := d.tool(st.p, 2)
		if err != nil {
			return nil, err
		}
		if st.p, st.done, err = d.lx.ArrNext(p); err != nil {
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

// flatTool decodes the tool a flat record is, from what the first pass
// collected: its name and description, and the offsets of its schema
// values.
func (d *Decoder) flatTool(h *toolAcc) error {
	t := *h
	// tool_schema's choice, made on the kinds alone: only the winner is
	// decoded.
	s := t.schema
	if s.kind == kAbsent || s.kind == kNull {
		s = t.alt
	}
	t.schema, t.alt = span{kind: s.kind}, span{}
	if s.kind == kMatch {
		a, b, end, err := d.schema(s.a, 1)
		if err != nil {
			return err
		}
		t.schema, t.schemaRaw = span{kMatch, a, b}, d.lx.data[s.a:end:end]
	}
	d.tools = append(d.tools, d.finishTool(&t))
	return nil
}
