package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// Truth is the ground truth of a generated census: the counts that
// `python3 bench/reference.py census server_tools.jsonl.gz` prints for it,
// computed by the generator from the values it wrote.
type Truth struct {
	// Buckets counts the tools carrying each non-normative bucket
	// ("raw_content_blob", "account_identity").
	Buckets map[string]int `json:"buckets"`
	// Classes counts, for each of the five gg: classes, the tools with at
	// least one property of the class and those with at least one that is
	// also required.
	Classes map[string]ClassCount `json:"classes"`
	// Servers is the number of distinct server ids with at least one tool.
	Servers int `json:"servers"`
	// Shapes counts the records of each shape ("server", "tool", "flat").
	Shapes map[string]int `json:"shapes"`
	// Tools is the number of tools.
	Tools int `json:"tools"`
}

// ClassCount is one class's pair of counts.
type ClassCount struct {
	Required int `json:"required"`
	Tools    int `json:"tools"`
}

var shapeNames = [...]string{shapeServer: "server", shapeTool: "tool", shapeFlat: "flat"}

func (c *counts) truth() *Truth {
	t := &Truth{
		Buckets: map[string]int{"raw_content_blob": c.buckets[0], "account_identity": c.buckets[1]},
		Classes: map[string]ClassCount{},
		Servers: c.servers,
		Shapes:  map[string]int{},
		Tools:   c.tools,
	}
	for i := range c.classTools {
		t.Classes[(classify.Set(1) << i).ID()] = ClassCount{Required: c.classReq[i], Tools: c.classTools[i]}
	}
	for i, n := range c.shapes {
		// reference.py only has a key for the shapes it saw.
		if n > 0 {
			t.Shapes[shapeNames[i]] = n
		}
	}
	return t
}

// MarshalPython returns the bytes `reference.py census` prints: json.dump
// with sort_keys=True and the default separators, then a newline.
func (t *Truth) MarshalPython() []byte {
	var b bytes.Buffer
	ints := func(m map[string]int) {
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(m)) {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %d", strconv.Quote(k), m[k])
		}
		b.WriteByte('}')
	}
	b.WriteString(`{"buckets": `)
	ints(t.Buckets)
	b.WriteString(`, "classes": {`)
	for i, k := range slices.Sorted(maps.Keys(t.Classes)) {
		if i > 0 {
			b.WriteString(", ")
		}
		c := t.Classes[k]
		fmt.Fprintf(&b, `%s: {"required": %d, "tools": %d}`, strconv.Quote(k), c.Required, c.Tools)
	}
	fmt.Fprintf(&b, `}, "servers": %d, "shapes": `, t.Servers)
	ints(t.Shapes)
	fmt.Fprintf(&b, `, "tools": %d}`+"\n", t.Tools)
	return b.Bytes()
}

// ReadTruth reads a truth.json written by Write (or the output of
// reference.py census).
func ReadTruth(path string) (*Truth, error) {
	data, err := outset.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Truth
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if t.Classes == nil || t.Buckets == nil || t.Shapes == nil {
		return nil, fmt.Errorf("%s: not a census truth (classes, buckets or shapes missing)", path)
	}
	return &t, nil
}
