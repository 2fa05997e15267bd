package sensitivity_test

import (
	"github.com/atlas-reproduce/atlas-reproduce/census"
	"github.com/atlas-reproduce/atlas-reproduce/classify"
	"github.com/atlas-reproduce/atlas-reproduce/sensitivity"
)

// refDeep is the deep variant written as the definition reads, over the
// generic values of census's reference parser: the slow twin the fuzz
// target holds Deep to.
func refDeep(node *census.Value, depth int) classify.Set {
	if node == nil || node.Kind != census.ValueDict || depth > sensitivity.MaxDepth {
		return 0
	}
	var set classify.Set
	if props := node.Dict["properties"]; props != nil && props.Kind == census.ValueDict {
		for _, name := range props.Keys {
			desc := ""
			if p := props.Dict[name]; p.Kind == census.ValueDict {
				if d := p.Dict["description"]; d != nil && d.Kind == census.ValueString {
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
			if v.Kind == census.ValueDict {
				for _, k := range v.Keys {
					set |= refDeep(v.Dict[k], depth+1)
				}
			}
		case "additionalProperties", "not", "if", "then", "else":
			set |= refDeep(v, depth+1)
		case "items":
			if v.Kind == census.ValueList {
				for _, e := range v.List {
					set |= refDeep(e, depth+1)
				}
			} else {
				set |= refDeep(v, depth+1)
			}
		case "prefixItems", "anyOf", "oneOf", "allOf":
			if v.Kind == census.ValueList {
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
func refToolSchemas(line []byte) ([]*census.Value, error) {
	v, err := census.ReferenceParse(line)
	if err != nil {
		return nil, err
	}
	if v.Kind != census.ValueDict {
		return nil, nil
	}
	var tools []*census.Value
	if ts, ok := v.Dict["tools"]; ok {
		if ts.Kind != census.ValueList {
			return nil, nil
		}
		tools = ts.List
	} else if t, ok := v.Dict["tool"]; ok {
		tools = []*census.Value{t}
	} else {
		tools = []*census.Value{v}
	}
	var out []*census.Value
	for _, t := range tools {
		if t.Kind != census.ValueDict {
			return nil, nil
		}
		s := t.Dict["inputSchema"]
		if s == nil || s.Kind == census.ValueNull {
			s = t.Dict["input_schema"]
		}
		out = append(out, s)
	}
	return out, nil
}
