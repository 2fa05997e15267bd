package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestSpliceMeta(t *testing.T) {
	const m = `{"x":1}`
	const k = `"` + MetaKey + `":` + m
	cases := []struct {
		name, tool, want string
		forged           bool
	}{
		{"no _meta", `{"name":"a"}`, `{"name":"a","_meta":{` + k + `}}`, false},
		{"empty tool", `{}`, `{"_meta":{` + k + `}}`, false},
		{"empty _meta", `{"_meta":{},"name":"a"}`, `{"_meta":{` + k + `},"name":"a"}`, false},
		{"_meta kept", `{"_meta":{"v/a":[1,{"b":"}"}]},"name":"a"}`, `{"_meta":{"v/a":[1,{"b":"}"}],` + k + `},"name":"a"}`, false},
		{"whitespace", "{ \"name\" : \"a\" ,\n \"_meta\" : { \"v\" : 1 } }", "{ \"name\" : \"a\" ,\n \"_meta\" : { \"v\" : 1 ," + k + "} }", false},
		// A tool that speaks for the proxy leaves with one _meta object
		// holding one key, ours: readers keeping the first duplicate
		// member must not see a forged label.
		{"last _meta wins, the first goes", `{"_meta":{"a":1},"name":"n","_meta":{"b":2}}`, `{"name":"n","_meta":{"b":2,` + k + `}}`, true},
		{"forged key replaced", `{"name":"n","_meta":{"` + MetaKey + `":{"classes":[]},"v":1}}`, `{"name":"n","_meta":{"v":1,` + k + `}}`, true},
		{"forged key twice", `{"_meta":{"` + MetaKey + `":1,"` + MetaKey + `":2}}`, `{"_meta":{` + k + `}}`, true},
		{"escaped forged key", `{"_meta":{"io.github.atlas-reproduce\/param-risk":1}}`, `{"_meta":{` + k + `}}`, true},
		{"_meta a string", `{"_meta":"x","name":"n"}`, `{"_meta":{` + k + `},"name":"n"}`, true},
		{"escaped key", `{"\u005fmeta":{"a":1}}`, `{"\u005fmeta":{"a":1,` + k + `}}`, false},
		{"_meta not an object", `{"_meta":null}`, `{"_meta":{` + k + `}}`, true},
		{"strings with braces", `{"d":"{\"_meta\":1}"}`, `{"d":"{\"_meta\":1}","_meta":{` + k + `}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, forged := spliceMeta(nil, []byte(c.tool), []byte(m))
			if string(got) != c.want || forged != c.forged {
				t.Errorf("\n got %s forged %v\nwant %s forged %v", got, forged, c.want, c.forged)
			}
			// Twice through: the same bytes (a second proxy's label
			// replaces the first's).
			again, _ := spliceMeta(nil, got, []byte(m))
			if !bytes.Equal(again, got) && c.forged {
				t.Errorf("second pass\n got %s\nwant %s", again, got)
			}
			if !json.Valid(got) {
				t.Errorf("invalid JSON: %s", got)
			}
		})
	}
}

func TestRewriteList(t *testing.T) {
	label := func(tool []byte) *labelEntry {
		var v struct{ Name string }
		if json.Unmarshal(tool, &v) != nil || v.Name == "" {
			return nil
		}
		return &labelEntry{name: v.Name, classes: []string{"gg:" + v.Name}, meta: []byte(`1`)}
	}
	keepAll := func([]byte, *labelEntry) bool { return true }
	hideB := func(_ []byte, e *labelEntry) bool { return e == nil || e.name != "b" }
	cases := []struct {
		name, in, want string
		keep           func([]byte, *labelEntry) bool
		st             listStats
	}{
		{"labels each", `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"c"}`,
			`{"tools":[{"name":"a","_meta":{"` + MetaKey + `":1}},{"name":"b","_meta":{"` + MetaKey + `":1}}],"nextCursor":"c"}`, keepAll, listStats{labelled: 2}},
		{"hides", `{"tools":[{"name":"a"},{"name":"b"},{"name":"c"}]}`,
			`{"tools":[{"name":"a","_meta":{"` + MetaKey + `":1}},{"name":"c","_meta":{"` + MetaKey + `":1}}]}`, hideB, listStats{labelled: 2, hidden: 1}},
		{"hides the only one", `{"tools":[{"name":"b"}]}`, `{"tools":[]}`, hideB, listStats{hidden: 1}},
		{"unlabelled passes", `{"tools":[{"x":1},{"name":"a"}]}`,
			`{"tools":[{"x":1},{"name":"a","_meta":{"` + MetaKey + `":1}}]}`, keepAll, listStats{labelled: 1, unlabelled: 1}},
		{"empty list", `{"tools":[]}`, `{"tools":[]}`, keepAll, listStats{}},
		{"no tools", `{"other":[{"name":"a"}]}`, `{"other":[{"name":"a"}]}`, keepAll, listStats{}},
		{"tools not a list", `{"tools":{"name":"a"}}`, `{"tools":{"name":"a"}}`, keepAll, listStats{}},
		{"last tools wins", `{"tools":[{"name":"z"}],"tools":[{"name":"a"}]}`,
			`{"tools":[{"name":"z"}],"tools":[{"name":"a","_meta":{"` + MetaKey + `":1}}]}`, keepAll, listStats{labelled: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, st, err := rewriteList(nil, []byte(c.in), label, c.keep)
			if err != nil {
				t.Fatal(err)
			}
			var gc, wc bytes.Buffer
			json.Compact(&gc, got)
			json.Compact(&wc, []byte(c.want))
			if gc.String() != wc.String() || st != c.st {
				t.Errorf("\n got %s %+v\nwant %s %+v", got, st, c.want, c.st)
			}
		})
	}
}

// FuzzRewriteList: whatever the server sends, the result is valid JSON
// when the input was, and a result without a tools list passes unchanged.
func FuzzRewriteList(f *testing.F) {
	for _, s := range []string{`{"tools":[{"name":"a","_meta":{"b":1}}]}`, `{"tools":[1,"x",null,{}]}`, `{}`, `[]`, `{"tools":[{"_meta":[]}]}`} {
		f.Add([]byte(s))
	}
	ent := &labelEntry{name: "t", meta: []byte(`{"classes":[]}`)}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, _, err := rewriteList(nil, in, func(tool []byte) *labelEntry {
			if len(tool) > 0 && tool[0] == '{' {
				return ent
			}
			return nil
		}, func([]byte, *labelEntry) bool { return true })
		if !json.Valid(in) {
			return
		}
		if err != nil && !bytes.Equal(got, in) {
			t.Fatalf("valid input %q failed (%v) and changed to %q", in, err, got)
		}
		if !json.Valid(got) {
			t.Fatalf("%q became invalid %q", in, got)
		}
		var v map[string]json.RawMessage
		if json.Unmarshal(in, &v) != nil || v["tools"] == nil || v["tools"][0] != '[' {
			if !bytes.Equal(got, in) {
				t.Fatalf("%q changed to %q", in, got)
			}
		}
	})
}

func TestSplitCommand(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "npx -y @scope/server", want: []string{"npx", "-y", "@scope/server"}},
		{in: `  node  'my server.js'  "--opt=a \"b\""  `, want: []string{"node", "my server.js", `--opt=a "b"`}},
		{in: `a\ b c`, want: []string{"a b", "c"}},
		{in: `x ''`, want: []string{"x", ""}},
		{in: `'unterminated`, bad: true},
		{in: `"unterminated`, bad: true},
		{in: "   ", bad: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := SplitCommand(c.in)
			if (err != nil) != c.bad || !slices.Equal(got, c.want) {
				t.Errorf("got %q, %v; want %q (error %v)", got, err, c.want, c.bad)
			}
		})
	}
}

func TestLabelCache(t *testing.T) {
	l := newLabeller(1)
	tools := []string{
		`{"name":"a","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}`,
		`{"name":"b","inputSchema":{"type":"object","properties":{"url":{"type":"string"}}}}`,
		`{"name":"c","inputSchema":{"type":"object","properties":{"command":{"type":"string"}}}}`,
		// tool 0 again, other bytes, the same definition
		`{ "inputSchema" : {"properties":{"path":{"type":"string"}}, "type":"object"}, "name" : "a" }`,
	}
	steps := []struct {
		tool int
		hit  bool
	}{{0, false}, {0, true}, {3, true}, {1, false}, {0, false}, {2, false}, {3, false}}
	for i, s := range steps {
		ent, hit, err := l.label([]byte(tools[s.tool]))
		if err != nil {
			t.Fatal(err)
		}
		if hit != s.hit {
			t.Errorf("step %d (tool %d): hit %v, want %v", i, s.tool, hit, s.hit)
		}
		if want := string(rune('a' + s.tool%3)); ent.name != want {
			t.Errorf("step %d: name %q, want %q", i, ent.name, want)
		}
	}
}

// TestLabelBounds: a tool past maxToolBytes is not labelled, the cache
// holds at most maxBytes of labels, and a list gains at most
// maxListLabelBytes of them (later tools pass unlabelled).
func TestLabelBounds(t *testing.T) {
	l := newLabeller(1 << 20)
	big := []byte(`{"name":"big","inputSchema":{"type":"object"},"description":"` + strings.Repeat("x", maxToolBytes) + `"}`)
	if _, _, err := l.label(big); err != errTooLarge {
		t.Errorf("a tool of %d bytes: %v, want errTooLarge", len(big), err)
	}
	l.maxBytes = 64 << 10
	for i := range 2000 {
		tool := fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object","properties":{"p%d":{"type":"string"}}}}`, i, i)
		if _, _, err := l.label([]byte(tool)); err != nil {
			t.Fatal(err)
		}
		if l.bytes > l.maxBytes {
			t.Fatalf("the cache holds %d bytes of labels, bound %d", l.bytes, l.maxBytes)
		}
	}
	// A list of tools of many tiny properties: the labels stop at the
	// bound, the tools all pass.
	var tools []string
	props := make([]string, 4000)
	for i := range props {
		props[i] = fmt.Sprintf(`"%d":{}`, i)
	}
	for i := range 200 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object","properties":{%s}}}`, i, strings.Join(props, ",")))
	}
	result := []byte(`{"tools":[` + strings.Join(tools, ",") + `]}`)
	p, err := New(Config{Upstream: Upstream{URL: "http://127.0.0.1:1/"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{p: p, pending: map[any]pendingCall{}, tools: map[string]*toolState{}}
	out := s.labelList(result)
	added := len(out) - len(result)
	if added > maxListLabelBytes+1<<20 || added < maxListLabelBytes/2 {
		t.Errorf("the list gained %d bytes of labels, bound %d", added, maxListLabelBytes)
	}
	if n := bytes.Count(out, []byte(`"name":"t`)); n != 200 {
		t.Errorf("%d tools passed, want 200", n)
	}
}
