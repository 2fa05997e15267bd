package sensitivity_test

import (
	"github.com/atlas-reproduce/atlas-reproduce/internal/jsonref"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

// refDeep is the deep variant written as the definition reads, over the
// generic values of the jsonref oracle: the slow twin the fuzz
// target holds Deep to.
func refDeep(node *jsonref.Value, depth int) classify.Set {
	if node == nil || node.Kind != jsonref.Dict || depth > sensitivity.MaxDepth {
		return 0
	}
	var set classify.Set
	if props := node.Dict["properties"]; props != nil && props.Kind == jsonref.Dict {
		for _, name := range props.Keys {
			desc := ""
			if p := props.Dict[name]; p.Kind == jsonref.Dict {
				if d := p.Dict["description"]; d != nil && d.Kind == jsonref.String {
					desc = d.Str
				}
			}
			set |= classify.Property(name, desc)
		}
	}
	for _, key := range node.Keys {
		v := node.Dict[key]
		switch key {
		case "properties", "patternProperties", "$defs", "definitions":
			if v.Kind == jsonref.Dict {
				for _, k := range v.Keys {
					set |= refDeep(v.Dict[k], depth+1)
				}
			}
		case "additionalProperties", "not", "if", "then", "else":
			set |= refDeep(v, depth+1)
		case "items":
			if v.Kind == jsonref.List {
				for _, e := range v.List {
					set |= refDeep(e, depth+1)
				}
			} else {
				set |= refDeep(v, depth+1)
			}
		case "prefixItems", "anyOf", "oneOf", "allOf":
			if v.Kind == jsonref.List {
				for _, e := range v.List {
					set |= refDeep(e, depth+1)
				}
			}
		}
	}
	return set
}

// refToolSchemas returns the schema value tool_schema picks for each tool
// of a line the reference parser reads, in order (nil for none).
func refToolSchemas(line []byte) ([]*jsonref.Value, error) {
	v, err := jsonref.Parse(line)
	if err != nil {
		return nil, err
	}
	if v.Kind != jsonref.Dict {
		return nil, nil
	}
	var tools []*jsonref.Value
	if ts, ok := v.Dict["tools"]; ok {
		if ts.Kind != jsonref.List {
			return nil, nil
		}
		tools = ts.List
	} else if t, ok := v.Dict["tool"]; ok {
		tools = []*jsonref.Value{t}
	} else {
		tools = []*jsonref.Value{v}
	}
	var out []*jsonref.Value
	for _, t := range tools {
		if t.Kind != jsonref.Dict {
			return nil, nil
		}
		s := t.Dict["inputSchema"]
		if s == nil || s.Kind == jsonref.Null {
			s = t.Dict["input_schema"]
		}
		out = append(out, s)
	}
	return out, nil
}
