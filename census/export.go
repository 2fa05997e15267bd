package census

// Helpers for packages that read a tool's Schema text themselves, so that
// they unescape strings and see values exactly as the decoders do.

// AppendUnescaped appends the decoded form of raw, the content between the
// quotes of a JSON string that a Decoder has accepted (Tool.Schema holds
// only such strings): escapes decoded as CPython's json decodes them,
// surrogate pairs combined, a lone surrogate kept in its WTF-8 form.
func AppendUnescaped(dst, raw []byte) []byte { return appendUnescaped(dst, raw) }

// ValueKind is the Python type a JSON value decodes to.
type ValueKind uint8

// The kinds of Value.
const (
	ValueNull ValueKind = iota
	ValueBool
	ValueInt
	ValueFloat
	ValueString
	ValueList
	ValueDict
)

// Value is a JSON value as CPython's json.loads builds it, from the slow
// reference parser: a dict keeps its keys in first-insertion order, each
// with the last value given to it.
type Value struct {
	Kind ValueKind
	// Str is a string in WTF-8, or the literal text of a number or constant.
	Str  string
	List []*Value
	// Keys and Dict are a dict's keys in order and its values.
	Keys []string
	Dict map[string]*Value
}

// ReferenceParse is json.loads on a line, by the reference parser that
// ReferenceDecode uses. It is slow and allocates freely: it is for tests and
// fuzz targets that need a literal model of the JSON to hold a fast reader
// against.
func ReferenceParse(line []byte) (*Value, error) {
	v, err := refParse(line)
	if err != nil {
		return nil, err
	}
	return exportValue(v), nil
}

func exportValue(v *jsonValue) *Value {
	out := &Value{Kind: ValueKind(v.kind), Str: v.str}
	switch v.kind {
	case jList:
		out.List = make([]*Value, len(v.list))
		for i, e := range v.list {
			out.List[i] = exportValue(e)
		}
	case jDict:
		out.Keys = v.dict.keys
		out.Dict = make(map[string]*Value, len(v.dict.keys))
		for _, k := range v.dict.keys {
			out.Dict[k] = exportValue(v.dict.vals[k])
		}
	}
	return out
}
