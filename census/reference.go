package census

import (
	"strings"
	"unicode/utf8"
)

// The slow reference: a line-by-line transcription of what the Python
// reference does to a line. It decodes the line into code points, as
// Python's str, and walks them with CPython's json scanner algorithm
// (Modules/_json.c: scan_once, _parse_object, _parse_array, scanstring,
// _match_number) into ordered generic values; then tools_of, server_id,
// tool_schema and iter_properties run on those values as written in
// bench/reference.py. It is simple rather than fast and allocates freely;
// the tests and fuzz targets hold Decoder to it.

// jsonKind is the Python type a JSON value decodes to.
type jsonKind uint8

const (
	jNull jsonKind = iota
	jBool
	jInt
	jFloat
	jString
	jList
	jDict
)

// jsonValue is a decoded JSON value. For jString, str is the string in
// WTF-8; for numbers it is the literal text.
type jsonValue struct {
	kind jsonKind
	str  string
	list []*jsonValue
	dict *jsonDict
	raw  []byte // a dict's text in the line, for Tool.Schema
}

// jsonDict is a Python dict: keys in first-insertion order, the last value
// assigned to each.
type jsonDict struct {
	keys []string
	vals map[string]*jsonValue
}

func (o *jsonDict) set(k string, v *jsonValue) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// get is dict.get: nil for a missing key (and JSON null is a non-nil value
// of kind jNull; callers that treat both as None say so).
func (o *jsonDict) get(k string) *jsonValue {
	return o.vals[k]
}

// refParser holds the line as code points, like a Python str, with the byte
// offset of each so that errors can be reported in bytes.
type refParser struct {
	s    []rune
	off  []int // byte offset of s[i]; off[len(s)] is the line length
	line []byte
}

func (r *refParser) err(idx int, msg string) error {
	return &SyntaxError{Offset: r.off[idx], Msg: msg}
}

// refParse is json.loads on the line decoded as strict UTF-8.
func refParse(line []byte) (*jsonValue, error) {
	r := &refParser{s: make([]rune, 0, len(line)), off: make([]int, 0, len(line)+1), line: line}
	for i := 0; i < len(line); {
		c, n := utf8.DecodeRune(line[i:])
		if c == utf8.RuneError && n == 1 {
			return nil, &SyntaxError{Offset: i, Msg: msgUTF8}
		}
		r.s = append(r.s, c)
		r.off = append(r.off, i)
		i += n
	}
	r.off = append(r.off, len(line))
	// json.loads refuses a str that starts with a BOM.
	if len(r.s) > 0 && r.s[0] == 0xfeff {
		return nil, r.err(0, msgBOM)
	}
	// JSONDecoder.decode: skip whitespace, raw_decode, skip whitespace, and
	// anything left over is "Extra data".
	v, end, err := r.scanOnce(r.ws(0), 0)
	if err != nil {
		return nil, err
	}
	if end = r.ws(end); end != len(r.s) {
		return nil, r.err(end, msgExtra)
	}
	return v, nil
}

// ws skips json's whitespace: space, tab, LF, CR only.
func (r *refParser) ws(i int) int {
	for i < len(r.s) && (r.s[i] == ' ' || r.s[i] == '\t' || r.s[i] == '\n' || r.s[i] == '\r') {
		i++
	}
	return i
}

// has reports whether the code points at i spell lit.
func (r *refParser) has(i int, lit string) bool {
	if i+len(lit) > len(r.s) {
		return false
	}
	for j := 0; j < len(lit); j++ {
		if r.s[i+j] != rune(lit[j]) {
			return false
		}
	}
	return true
}

// scanOnce parses the value at idx. depth counts the containers already
// open; CPython's recursion guard is modelled by MaxDepth.
func (r *refParser) scanOnce(idx, depth int) (*jsonValue, int, error) {
	if idx >= len(r.s) {
		return nil, idx, r.err(idx, msgValue)
	}
	switch r.s[idx] {
	case '"':
		s, end, err := r.scanString(idx + 1)
		return &jsonValue{kind: jString, str: s}, end, err
	case '{':
		if depth+1 > MaxDepth {
			return nil, idx, r.err(idx, msgDepth)
		}
		return r.parseObject(idx+1, depth+1)
	case '[':
		if depth+1 > MaxDepth {
			return nil, idx, r.err(idx, msgDepth)
		}
		return r.parseArray(idx+1, depth+1)
	case 'n':
		if r.has(idx, "null") {
			return &jsonValue{kind: jNull}, idx + 4, nil
		}
	case 't':
		if r.has(idx, "true") {
			return &jsonValue{kind: jBool, str: "true"}, idx + 4, nil
		}
	case 'f':
		if r.has(idx, "false") {
			return &jsonValue{kind: jBool, str: "false"}, idx + 5, nil
		}
	case 'N':
		if r.has(idx, "NaN") {
			return &jsonValue{kind: jFloat, str: "NaN"}, idx + 3, nil
		}
	case 'I':
		if r.has(idx, "Infinity") {
			return &jsonValue{kind: jFloat, str: "Infinity"}, idx + 8, nil
		}
	case '-':
		if r.has(idx, "-Infinity") {
			return &jsonValue{kind: jFloat, str: "-Infinity"}, idx + 9, nil
		}
	}
	return r.matchNumber(idx)
}

func isDigitRune(c rune) bool { return c >= '0' && c <= '9' }

// matchNumber is _match_number_unicode.
func (r *refParser) matchNumber(start int) (*jsonValue, int, error) {
	s := r.s
	endIdx := len(s) - 1
	idx := start
	if s[idx] == '-' {
		idx++
		if idx > endIdx {
			return nil, start, r.err(start, msgValue)
		}
	}
	intStart := idx
	if s[idx] >= '1' && s[idx] <= '9' {
		idx++
		for idx <= endIdx && isDigitRune(s[idx]) {
			idx++
		}
	} else if s[idx] == '0' {
		idx++
	} else {
		return nil, start, r.err(start, msgValue)
	}
	intDigits := idx - intStart
	isFloat := false
	if idx < endIdx && s[idx] == '.' && isDigitRune(s[idx+1]) {
		isFloat = true
		idx += 2
		for idx <= endIdx && isDigitRune(s[idx]) {
			idx++
		}
	}
	if idx < endIdx && (s[idx] == 'e' || s[idx] == 'E') {
		eStart := idx
		idx++
		if idx < endIdx && (s[idx] == '-' || s[idx] == '+') {
			idx++
		}
		for idx <= endIdx && isDigitRune(s[idx]) {
			idx++
		}
		if isDigitRune(s[idx-1]) {
			isFloat = true
		} else {
			idx = eStart
		}
	}
	text := string(s[start:idx])
	if isFloat {
		return &jsonValue{kind: jFloat, str: text}, idx, nil
	}
	// PyLong_FromString and sys.int_max_str_digits.
	if intDigits > MaxIntDigits {
		return nil, start, r.err(start, msgIntDigits)
	}
	return &jsonValue{kind: jInt, str: text}, idx, nil
}

// scanString is scanstring_unicode with strict=True; end is the index just
// after the opening quote. It returns the string in WTF-8.
func (r *refParser) scanString(end int) (string, int, error) {
	s := r.s
	n := len(s)
	begin := end - 1
	var chunks []rune
	for {
		next := end
		var c rune
		for ; next < n; next++ {
			c = s[next]
			if c == '"' || c == '\\' {
				break
			}
			if c <= 0x1f {
				return "", next, r.err(next, msgControl)
			}
		}
		if next >= n {
			return "", begin, r.err(begin, msgUnterminated)
		}
		chunks = append(chunks, s[end:next]...)
		if c == '"' {
			return wtf8(chunks), next + 1, nil
		}
		next++ // the backslash
		if next == n {
			return "", begin, r.err(begin, msgUnterminated)
		}
		c = s[next]
		if c != 'u' {
			end = next + 1
			switch c {
			case '"', '\\', '/':
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			default:
				return "", end - 2, r.err(end-2, msgEscape)
			}
		} else {
			next++
			end = next + 4
			if end >= n {
				return "", next - 1, r.err(next-1, msgUEscape)
			}
			v, ok := hexRunes(s[next:end])
			if !ok {
				return "", end - 5, r.err(end-5, msgUEscape)
			}
			c = v
			next = end
			// A high surrogate followed by another \u escape may pair.
			if c >= 0xd800 && c <= 0xdbff && end+6 < n && s[next] == '\\' && s[next+1] == 'u' {
				end += 6
				c2, ok := hexRunes(s[next+2 : end])
				if !ok {
					return "", end - 5, r.err(end-5, msgUEscape)
				}
				if c2 >= 0xdc00 && c2 <= 0xdfff {
					c = 0x10000 + (c-0xd800)<<10 + (c2 - 0xdc00)
				} else {
					end -= 6
				}
			}
		}
		chunks = append(chunks, c)
	}
}

func hexRunes(h []rune) (rune, bool) {
	var v rune
	for _, d := range h {
		v <<= 4
		switch {
		case d >= '0' && d <= '9':
			v |= d - '0'
		case d >= 'a' && d <= 'f':
			v |= d - 'a' + 10
		case d >= 'A' && d <= 'F':
			v |= d - 'A' + 10
		default:
			return 0, false
		}
	}
	return v, true
}

// wtf8 encodes code points as Python's "utf-8" codec with "surrogatepass"
// would: lone surrogates as 3-byte sequences.
func wtf8(cs []rune) string {
	var b strings.Builder
	for _, c := range cs {
		if c >= 0xd800 && c <= 0xdfff {
			b.WriteByte(byte(0xe0 | c>>12))
			b.WriteByte(byte(0x80 | (c>>6)&0x3f))
			b.WriteByte(byte(0x80 | c&0x3f))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// parseObject is _parse_object_unicode; idx is just after the '{'.
func (r *refParser) parseObject(idx, depth int) (*jsonValue, int, error) {
	start := idx
	s := r.s
	n := len(s)
	obj := &jsonDict{vals: map[string]*jsonValue{}}
	idx = r.ws(idx)
	if idx >= n || s[idx] != '}' {
		for {
			if idx >= n || s[idx] != '"' {
				return nil, idx, r.err(idx, msgKey)
			}
			key, next, err := r.scanString(idx + 1)
			if err != nil {
				return nil, next, err
			}
			idx = r.ws(next)
			if idx >= n || s[idx] != ':' {
				return nil, idx, r.err(idx, msgColon)
			}
			idx = r.ws(idx + 1)
			val, next, err := r.scanOnce(idx, depth)
			if err != nil {
				return nil, next, err
			}
			obj.set(key, val)
			idx = r.ws(next)
			if idx < n && s[idx] == '}' {
				break
			}
			if idx >= n || s[idx] != ',' {
				return nil, idx, r.err(idx, msgComma)
			}
			idx = r.ws(idx + 1)
		}
	}
	return &jsonValue{kind: jDict, dict: obj, raw: r.line[r.off[start-1]:r.off[idx+1]]}, idx + 1, nil
}

// parseArray is _parse_array_unicode; idx is just after the '['.
func (r *refParser) parseArray(idx, depth int) (*jsonValue, int, error) {
	s := r.s
	n := len(s)
	arr := &jsonValue{kind: jList}
	idx = r.ws(idx)
	if idx >= n || s[idx] != ']' {
		for {
			val, next, err := r.scanOnce(idx, depth)
			if err != nil {
				return nil, next, err
			}
			arr.list = append(arr.list, val)
			idx = r.ws(next)
			if idx < n && s[idx] == ']' {
				break
			}
			if idx >= n || s[idx] != ',' {
				return nil, idx, r.err(idx, msgComma)
			}
			idx = r.ws(idx + 1)
		}
	}
	return arr, idx + 1, nil
}

// ReferenceDecode decodes a line the slow, obviously-correct way: a
// transcription of CPython's json scanner into generic values, then of the
// reference's tools_of, server_id, tool_schema and iter_properties. It
// returns what Decoder.Decode returns (errors included, at the same offsets
// with the same messages) in freshly allocated memory. It exists for tests,
// fuzz targets and anyone who wants to check Decoder on their own data.
func ReferenceDecode(line []byte) (*Record, error) {
	v, err := refParse(line)
	if err != nil {
		return nil, err
	}
	return refRecord(v)
}

// refRecord is tools_of, with server_id and the enumeration of each tool.
func refRecord(rec *jsonValue) (*Record, error) {
	if rec.kind != jDict {
		return nil, &RecordError{Msg: msgNotObject}
	}
	out := &Record{}
	out.ServerID, out.HasServerID = refServerID(rec.dict)
	var tools []*jsonValue
	if tv, ok := rec.dict.vals["tools"]; ok {
		if tv.kind != jList {
			return nil, &RecordError{Msg: msgToolsList}
		}
		for i, t := range tv.list {
			if t.kind != jDict {
				return nil, &RecordError{Msg: toolsElemMsg(i)}
			}
			tools = append(tools, t)
		}
		out.Shape = ShapeServer
	} else if t, ok := rec.dict.vals["tool"]; ok {
		if t.kind != jDict {
			return nil, &RecordError{Msg: msgToolObject}
		}
		tools = []*jsonValue{t}
		out.Shape = ShapeTool
	} else {
		tools = []*jsonValue{rec}
		out.Shape = ShapeFlat
	}
	for _, t := range tools {
		out.Tools = append(out.Tools, refTool(t))
	}
	return out, nil
}

// refServerID is server_id: the first alias present whose value is a str,
// or an int (a JSON bool is not one here: it has its own kind).
func refServerID(rec *jsonDict) ([]byte, bool) {
	for _, k := range []string{"server_id", "server", "server_url", "url"} {
		v, ok := rec.vals[k]
		if !ok {
			continue
		}
		switch v.kind {
		case jString:
			return []byte(v.str), true
		case jInt:
			s := v.str
			if s == "-0" { // str(int("-0"))
				s = "0"
			}
			return []byte(s), true
		}
	}
	return nil, false
}

// refTool reads a tool's name and description (None unless a str) and
// enumerates the properties of tool_schema(tool).
func refTool(tv *jsonValue) Tool {
	t := tv.dict
	out := Tool{Raw: append([]byte(nil), tv.raw...)}
	if v := t.get("name"); v != nil && v.kind == jString {
		out.Name, out.HasName = []byte(v.str), true
	}
	if v := t.get("description"); v != nil && v.kind == jString {
		out.Description, out.HasDescription = []byte(v.str), true
	}
	schema := refToolSchema(t)
	out.Properties = refIterProperties(schema)
	if schema != nil && schema.kind == jDict {
		out.Schema = append([]byte(nil), schema.raw...)
	}
	return out
}

// refToolSchema is tool_schema: inputSchema, or input_schema when that is
// None (absent or JSON null). The result may be nil (None).
func refToolSchema(t *jsonDict) *jsonValue {
	s := t.get("inputSchema")
	if s == nil || s.kind == jNull {
		s = t.get("input_schema")
	}
	return s
}

// refIterProperties is iter_properties.
func refIterProperties(schema *jsonValue) []Property {
	if schema == nil || schema.kind != jDict {
		return nil
	}
	out := refSchemaProps(schema.dict, WhereProperties, "")
	for _, key := range []struct {
		name  string
		where WhereKind
	}{{"definitions", WhereDefinitions}, {"$defs", WhereDefs}} {
		defs := schema.dict.get(key.name)
		if defs == nil || defs.kind != jDict {
			continue
		}
		for _, dname := range defs.dict.keys {
			d := defs.dict.vals[dname]
			if d.kind != jDict {
				continue
			}
			if p := d.dict.get("properties"); p == nil || p.kind != jDict {
				continue
			}
			out = append(out, refSchemaProps(d.dict, key.where, dname)...)
		}
	}
	return out
}

// refSchemaProps is _schema_props.
func refSchemaProps(obj *jsonDict, where WhereKind, defKey string) []Property {
	props := obj.get("properties")
	if props == nil || props.kind != jDict {
		return nil
	}
	var req []string
	if r := obj.get("required"); r != nil && r.kind == jList {
		for _, e := range r.list {
			if e.kind == jString {
				req = append(req, e.str)
			}
		}
	}
	var out []Property
	for _, name := range props.dict.keys {
		p := props.dict.vals[name]
		desc := ""
		if p.kind == jDict {
			if d := p.dict.get("description"); d != nil && d.kind == jString {
				desc = d.str
			}
		}
		inReq := false
		for _, r := range req {
			if r == name {
				inReq = true
				break
			}
		}
		prop := Property{Name: []byte(name), Description: []byte(desc), Required: inReq, Where: where}
		if where != WhereProperties {
			prop.DefKey = []byte(defKey)
		}
		out = append(out, prop)
	}
	return out
}
