package sample

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/label"
)

// maxCensusLine bounds one census line: a server's tools/list result
// can be large.
const maxCensusLine = 256 << 20

// Units reads JSON Lines of tools, census records or tools/list results
// (what classify reads) and returns every property (unit "property") or
// every tool (unit "tool") with its tool's context and the rules' classes.
// file names the input in errors.
func Units(r io.Reader, file, unit string) ([]Item, error) {
	if unit != "property" && unit != "tool" {
		return nil, fmt.Errorf("unit %q is neither property nor tool", unit)
	}
	lab := label.NewLabeller()
	var out []Item
	err := eachLine(r, file, maxCensusLine, func(line []byte, where string) error {
		// The census is Python's JSON (NaN, Infinity), which the labeller's
		// decoder reads and encoding/json does not: such a line is still
		// sampled, without the descriptions this second reading finds.
		var doc any
		_ = json.Unmarshal(line, &doc)
		err := lab.ClassifyBody(line, func(t *label.ToolLabels) error {
			it := Item{Rule: []string{}}
			if t.ServerID != nil {
				it.Server = *t.ServerID
			}
			if t.Tool != nil {
				it.Tool = *t.Tool
			}
			tool := findTool(doc, it.Tool)
			it.ToolDescription = str(tool["description"])
			if unit == "tool" {
				it.Rule = append(it.Rule, t.Classes...)
				out = append(out, it)
				return nil
			}
			schema := toolSchema(tool)
			for _, p := range t.Properties {
				pi := it
				pi.Property = p.Name
				pi.Description = propertyDescription(schema, p.Where, p.Name)
				pi.Rule = append([]string{}, p.Classes...)
				out = append(out, pi)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// findTool finds the object in doc that is the tool called name: the one
// with that name and an input schema, searched depth first; doc itself
// when none is found (a bare tool or schema).
func findTool(doc any, name string) map[string]any {
	var found map[string]any
	var walk func(v any)
	walk = func(v any) {
		if found != nil {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if str(x["name"]) == name && toolSchema(x) != nil {
				found = x
				return
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	if found == nil {
		m, _ := doc.(map[string]any)
		return m
	}
	return found
}

// toolSchema is the tool's input schema, as the census decoder chooses
// it: inputSchema, or input_schema when that is absent or null.
func toolSchema(tool map[string]any) map[string]any {
	if s, ok := tool["inputSchema"].(map[string]any); ok {
		return s
	}
	if s, ok := tool["input_schema"].(map[string]any); ok {
		return s
	}
	return nil
}

// propertyDescription is the description of the property name found at
// where ("properties", "definitions/<key>" or "$defs/<key>").
func propertyDescription(schema map[string]any, where, name string) string {
	if schema == nil {
		return ""
	}
	holder := schema
	if k, key, ok := strings.Cut(where, "/"); ok {
		defs, _ := schema[k].(map[string]any)
		holder, _ = defs[key].(map[string]any)
	}
	props, _ := holder["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return str(p["description"])
}
