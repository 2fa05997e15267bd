package census

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/jsonref"
)

// The slow reference the tests and fuzz targets hold Decoder to.

// ReferenceDecode decodes a line the slow, obviously-correct way: the
// jsonref transcription of CPython's json scanner into generic values, then
// a transcription of the reference's tools_of, server_id, tool_schema and
// iter_properties. It returns what Decoder.Decode returns (errors included,
// at the same offsets with the same messages) in freshly allocated memory.
func ReferenceDecode(line []byte) (*Record, error) {
	v, err := refParse(line)
	if err != nil {
		return nil, err
	}
	return refRecord(v)
}

// refParse is jsonref.Parse with census's error type.
func refParse(line []byte) (*jsonref.Value, error) {
	v, err := jsonref.Parse(line)
	if se, ok := err.(*jsonref.SyntaxError); ok {
		return nil, &SyntaxError{Offset: se.Offset, Msg: se.Msg}
	}
	return v, err
}

// refRecord is tools_of, with server_id and the enumeration of each tool.
func refRecord(rec *jsonref.Value) (*Record, error) {
	if rec.Kind != jsonref.Dict {
		return nil, &RecordError{Msg: msgNotObject}
	}
	out := &Record{}
	out.ServerID, out.HasServerID = refServerID(rec)
	var tools []*jsonref.Value
	if tv, ok := rec.Dict["tools"]; ok {
		if tv.Kind != jsonref.List {
			return nil, &RecordError{Msg: msgToolsList}
		}
		for i, t := range tv.List {
			if t.Kind != jsonref.Dict {
				return nil, &RecordError{Msg: toolsElemMsg(i)}
			}
			tools = append(tools, t)
		}
		out.Shape = ShapeServer
	} else if t, ok := rec.Dict["tool"]; ok {
		if t.Kind != jsonref.Dict {
			return nil, &RecordError{Msg: msgToolObject}
		}
		tools = []*jsonref.Value{t}
		out.Shape = ShapeTool
	} else {
		tools = []*jsonref.Value{rec}
		out.Shape = ShapeFlat
	}
	for _, t := range tools {
		out.Tools = append(out.Tools, refTool(t))
	}
	return out, nil
}

// refServerID is server_id: the first alias present whose value is a str,
// or an int (a JSON bool is not one here: it has its own kind).
func refServerID(rec *jsonref.Value) ([]byte, bool) {
	for _, k := range []string{"server_id", "server", "server_url", "url"} {
		v, ok := rec.Dict[k]
		if !ok {
			continue
		}
		switch v.Kind {
		case jsonref.String:
			return []byte(v.Str), true
		case jsonref.Int:
			s := v.Str
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
func refTool(tv *jsonref.Value) Tool {
	t := tv
	out := Tool{Raw: append([]byte(nil), tv.Raw...)}
	if v := t.Get("name"); v != nil && v.Kind == jsonref.String {
		out.Name, out.HasName = []byte(v.Str), true
	}
	if v := t.Get("description"); v != nil && v.Kind == jsonref.String {
		out.Description, out.HasDescription = []byte(v.Str), true
	}
	schema := refToolSchema(t)
	out.Properties = refIterProperties(schema)
	if schema != nil && schema.Kind == jsonref.Dict {
		out.Schema = append([]byte(nil), schema.Raw...)
	}
	return out
}

// refToolSchema is tool_schema: inputSchema, or input_schema when that is
// None (absent or JSON null). The result may be nil (None).
func refToolSchema(t *jsonref.Value) *jsonref.Value {
	s := t.Get("inputSchema")
	if s == nil || s.Kind == jsonref.Null {
		s = t.Get("input_schema")
	}
	return s
}

// refIterProperties is iter_properties.
func refIterProperties(schema *jsonref.Value) []Property {
	if schema == nil || schema.Kind != jsonref.Dict {
		return nil
	}
	out := refSchemaProps(schema, WhereProperties, "")
	for _, key := range []struct {
		name  string
		where WhereKind
	}{{"definitions", WhereDefinitions}, {"$defs", WhereDefs}} {
		defs := schema.Get(key.name)
		if defs == nil || defs.Kind != jsonref.Dict {
			continue
		}
		for _, dname := range defs.Keys {
			d := defs.Dict[dname]
			if d.Kind != jsonref.Dict {
				continue
			}
			if p := d.Get("properties"); p == nil || p.Kind != jsonref.Dict {
				continue
			}
			out = append(out, refSchemaProps(d, key.where, dname)...)
		}
	}
	return out
}

// refSchemaProps is _schema_props.
func refSchemaProps(obj *jsonref.Value, where WhereKind, defKey string) []Property {
	props := obj.Get("properties")
	if props == nil || props.Kind != jsonref.Dict {
		return nil
	}
	var req []string
	if r := obj.Get("required"); r != nil && r.Kind == jsonref.List {
		for _, e := range r.List {
			if e.Kind == jsonref.String {
				req = append(req, e.Str)
			}
		}
	}
	var out []Property
	for _, name := range props.Keys {
		p := props.Dict[name]
		desc := ""
		if p.Kind == jsonref.Dict {
			if d := p.Get("description"); d != nil && d.Kind == jsonref.String {
				desc = d.Str
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

// TestReferenceLimits keeps the oracle's restated limits equal to census's.
func TestReferenceLimits(t *testing.T) {
	if jsonref.MaxDepth != MaxDepth || jsonref.MaxIntDigits != MaxIntDigits {
		t.Errorf("jsonref limits %d, %d; census %d, %d", jsonref.MaxDepth, jsonref.MaxIntDigits, MaxDepth, MaxIntDigits)
	}
}
