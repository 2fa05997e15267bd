package census_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// TestSchemaTapeIsToolSchema holds SchemaTape to the schema the decoder
// chose for Tool.Schema: the same member names, each object's members once
// a name, and the same strings, where the tool has a tape.
func TestSchemaTapeIsToolSchema(t *testing.T) {
	tests := []struct {
		name, line string
		tape       bool // the tool has a schema and a tape
	}{
		{"inputSchema", `{"tools": [{"name": "a", "inputSchema": {"type": "object", "properties": {"p": {"description": "d"}}}}]}`, true},
		{"input_schema", `{"tools": [{"name": "a", "input_schema": {"properties": {"q": {}}, "title": "t"}}]}`, true},
		{"null falls back", `{"tools": [{"inputSchema": null, "input_schema": {"alias": "x"}, "name": "a"}]}`, true},
		{"inputSchema wins", `{"tools": [{"input_schema": {"alias": 1}, "inputSchema": {"main": 2}}]}`, true},
		{"last duplicate", `{"tools": [{"inputSchema": {"first": 1}, "inputSchema": {"second": 2, "second": "\u0041"}}]}`, true},
		{"escaped key", `{"tools": [{"input\u0053chema": {"esc\u0061ped": "v\nw", "b": [1, {"c": null}]}}]}`, true},
		{"not an object", `{"tools": [{"inputSchema": "text", "input_schema": {"x": 1}}]}`, false},
		{"absent", `{"tools": [{"name": "a"}]}`, false},
	}
	dec := census.NewDecoder()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := dec.Decode([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			tool := &rec.Tools[0]
			tp, n, ok := tool.SchemaTape()
			if ok != tc.tape {
				t.Fatalf("SchemaTape ok %v, want %v (Schema %s)", ok, tc.tape, tool.Schema)
			}
			if !ok {
				return
			}
			var want any
			if err := json.Unmarshal(tool.Schema, &want); err != nil {
				t.Fatal(err)
			}
			if got := tapeValue(t, &tp, n); !equalJSON(got, want) {
				t.Fatalf("tape %v, Schema %s", got, tool.Schema)
			}
		})
	}
}

// tapeValue rebuilds the value n of tp as encoding/json would decode it,
// numbers and literals left out.
func tapeValue(t *testing.T, tp *census.Tape, n census.TapeNode) any {
	t.Helper()
	var buf []byte
	switch {
	case tp.IsObject(n):
		m := map[string]any{}
		var keys []string
		from, to := tp.Children(n)
		for c := from; c < to; c++ {
			k := string(tp.Key(c))
			if _, dup := m[k]; dup {
				t.Fatalf("member %q twice on the tape", k)
			}
			keys = append(keys, k)
			m[k] = tapeValue(t, tp, c)
		}
		if !slices.IsSorted(keys) {
			t.Fatalf("members %q not in name order", keys)
		}
		return m
	case tp.IsArray(n):
		var a []any
		from, to := tp.Children(n)
		for c := from; c < to; c++ {
			a = append(a, tapeValue(t, tp, c))
		}
		return a
	case tp.IsString(n):
		s, _ := tp.String(n, &buf)
		return string(s)
	}
	return nil
}

// equalJSON compares decoded JSON with numbers, booleans and null taken
// as equal to nil.
func equalJSON(a, b any) bool {
	switch b := b.(type) {
	case map[string]any:
		am, ok := a.(map[string]any)
		if !ok || len(am) != len(b) {
			return false
		}
		for k, v := range b {
			if av, ok := am[k]; !ok || !equalJSON(av, v) {
				return false
			}
		}
		return true
	case []any:
		aa, ok := a.([]any)
		if !ok || len(aa) != len(b) {
			return false
		}
		for i := range b {
			if !equalJSON(aa[i], b[i]) {
				return false
			}
		}
		return true
	case string:
		return a == b
	}
	return a == nil
}
