package census

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestMegabytePropertyName(t *testing.T) {
	plain := strings.Repeat("n", 1<<20)
	escaped := strings.Repeat(`\u00e9`, 1<<18) // 1.5 MiB of escapes, 512 KiB decoded
	for _, tc := range []struct {
		name, key, want string
	}{
		{"plain", plain, plain},
		{"escaped", escaped, strings.Repeat("é", 1<<18)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := []byte(`{"server_id":"s","tools":[{"name":"t","inputSchema":{"properties":{"` + tc.key +
				`":{"description":"big"},"x":{}},"required":["` + tc.key + `"]}}]}`)
			d := NewDecoder()
			rec, err := d.Decode(line)
			if err != nil {
				t.Fatal(err)
			}
			props := rec.Tools[0].Properties
			if len(props) != 2 || string(props[0].Name) != tc.want || !props[0].Required ||
				string(props[0].Description) != "big" || props[1].Required {
				t.Fatalf("wrong properties: %d, first name %d bytes, required %v", len(props), len(props[0].Name), props[0].Required)
			}
			slow, serr := ReferenceDecode(line)
			if diff := diffRecords(rec, err, slow, serr); diff != "" {
				t.Fatalf("Decoder and ReferenceDecode differ: %s", diff)
			}
		})
	}
}

// bigLine builds a server line of at least size bytes: tools with long
// descriptions and a few properties each, some with escapes.
func bigLine(size int) ([]byte, int) {
	var b bytes.Buffer
	b.Grow(size + 1<<16)
	b.WriteString(`{"server_id":"big","tools":[`)
	desc := strings.Repeat("Reads a file from the workspace and returns its content. ", 70)
	n := 0
	for b.Len() < size {
		if n > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"tool_%d","description":"%s","inputSchema":{"type":"object","properties":{`+
			`"path":{"type":"string","description":"file path \u00e9 %d"},"n":{"type":"integer"},`+
			`"opts":{"type":"object","properties":{"deep":{"description":"not enumerated"}}}},`+
			`"required":["path"],"$defs":{"D":{"properties":{"d\n%d":{"description":"%s"}}}}}}`,
			n, desc, n, n, desc[:200])
		n++
	}
	b.WriteString(`]}`)
	return b.Bytes(), n
}

func TestHugeLine(t *testing.T) {
	const size = 64 << 20
	line, tools := bigLine(size)
	if len(line) < size {
		t.Fatalf("line is %d bytes", len(line))
	}
	d := NewDecoder()
	rec, err := d.Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Shape != ShapeServer || len(rec.Tools) != tools {
		t.Fatalf("got %v with %d tools, want server with %d", rec.Shape, len(rec.Tools), tools)
	}
	last := rec.Tools[tools-1]
	if string(last.Name) != fmt.Sprintf("tool_%d", tools-1) || len(last.Properties) != 4 ||
		string(last.Properties[0].Description) != fmt.Sprintf("file path é %d", tools-1) ||
		!last.Properties[0].Required || string(last.Properties[3].Name) != fmt.Sprintf("d\n%d", tools-1) ||
		last.Properties[3].WhereString() != "$defs/D" {
		t.Fatalf("last tool decoded wrong: %q %+v", last.Name, last.Properties)
	}

	// Every byte is validated, the last one included.
	bad := bytes.Clone(line)
	bad[len(bad)-1] = ']'
	_, err = d.Decode(bad)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != len(bad)-1 {
		t.Fatalf("corrupt last byte: got %v", err)
	}
	copy(bad, line)
	i := bytes.LastIndex(bad, []byte(`"deep"`))
	bad[i+2] = 0x01 // a raw control character deep in a skipped part
	if _, err = d.Decode(bad); !errors.As(err, &se) || se.Offset != i+2 || se.Msg != msgControl {
		t.Fatalf("control character near the end: got %v", err)
	}

	// The decoder lets go of the huge line's arenas on the next line.
	if _, err := d.Decode([]byte(`{"name":"small"}`)); err != nil {
		t.Fatal(err)
	}
	if cap(d.buf) > retainBytes || cap(d.out) > retainItems || cap(d.tools) > retainItems {
		t.Errorf("arenas kept after a small line: buf %d, out %d, tools %d", cap(d.buf), cap(d.out), cap(d.tools))
	}
}

func TestDeepNesting(t *testing.T) {
	const depth = 10000
	deepList := nest("[", "]", depth, "")
	deepObj := nest(`{"a":`, "}", depth, "1")
	cases := []struct {
		name   string
		line   string
		prefix string // everything before the first bracket that counts
		outer  int    // containers open before it
	}{
		{"top list", deepList, "", 0},
		{"top object", deepObj, "", 0},
		{"skipped member", `{"x":` + deepList + `}`, `{"x":`, 1},
		{"tool member", `{"tools":[{"name":"a","x":` + deepObj + `}]}`, `{"tools":[{"name":"a","x":`, 3},
		{"description", `{"inputSchema":{"properties":{"p":{"description":` + deepList + `}}}}`, `{"inputSchema":{"properties":{"p":{"description":`, 4},
		{"required", `{"inputSchema":{"required":[` + deepList + `]}}`, `{"inputSchema":{"required":[`, 3},
		{"def entry", `{"inputSchema":{"$defs":{"D":` + deepObj + `}}}`, `{"inputSchema":{"$defs":{"D":`, 3},
		{"unclosed", strings.Repeat("[", depth), "", 0},
	}
	d := NewDecoder()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The bracket that opens level MaxDepth+1.
			opener := deepList
			if strings.HasPrefix(tc.line[len(tc.prefix):], "{") {
				opener = deepObj
			}
			step := 1
			if opener == deepObj {
				step = len(`{"a":`)
			}
			want := len(tc.prefix) + (MaxDepth-tc.outer)*step
			for _, dec := range []func([]byte) (*Record, error){d.Decode, ReferenceDecode} {
				_, err := dec([]byte(tc.line))
				var se *SyntaxError
				if !errors.As(err, &se) || se.Msg != msgDepth || se.Offset != want {
					t.Errorf("got %v, want %q at %d", err, msgDepth, want)
				}
			}
		})
	}
}

// TestPrefixes decodes every prefix of a few lines (most are truncated JSON)
// with both decoders: same errors, at the same offsets, and no panic.
func TestPrefixes(t *testing.T) {
	lines := []string{
		`{"server_id":-0,"tools":[{"name":"a\u00e9\ud800","description":"d","inputSchema":{"$defs":{"D":{"properties":{"x":{"description":"dx"}},"required":["x"]}},"properties":{"b":{"description":"1"},"a":{},"b":{"description":"2"}},"required":["a","x"]}},{"name":"z","x":[1.5e3,NaN,-Infinity,true,false,null,{}]}]}`,
		`{"server":"s","tool":{"name":"t","input_schema":{"properties":{"p":{"type":"string"}}}},"url":12}`,
	}
	d := NewDecoder()
	for _, l := range lines {
		for i := 0; i <= len(l); i++ {
			line := []byte(l[:i])
			got, err := d.Decode(line)
			want, werr := ReferenceDecode(line)
			if diff := diffRecords(got, err, want, werr); diff != "" {
				t.Fatalf("prefix %q: %s", line, diff)
			}
		}
	}
}
