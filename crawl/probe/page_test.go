package probe

import (
	"encoding/json"
	"testing"
)

func TestParsePage(t *testing.T) {
	cases := []struct {
		raw, next, kind string
		tools           []string
	}{
		{raw: `{"tools": [ {"b": 1,  "a": 2, "a": 3} ], "nextCursor": "c"}`, next: "c", tools: []string{`{"b":1,"a":2,"a":3}`}},
		{raw: `{"tools":[],"nextCursor":null}`, tools: []string{}},
		{raw: `{"Tools":[]}`, kind: KindProtocol},
		{raw: `{"tools":null}`, kind: KindProtocol},
		{raw: `{"tools":{}}`, kind: KindProtocol},
		{raw: `{"tools":[],"nextCursor":5}`, kind: KindProtocol},
		{raw: `[]`, kind: KindProtocol},
		{raw: "{\"tools\":[{\"name\":\"a\xffb\"}]}", tools: []string{"{\"name\":\"a\uFFFDb\"}"}},
	}
	for _, c := range cases {
		tools, next, err := parsePage(json.RawMessage(c.raw))
		if c.kind != "" {
			if pe := asProbeError(err); pe == nil || pe.Kind != c.kind {
				kind := ""
				if pe != nil {
					kind = pe.Kind
				}
				t.Errorf("%s: kind %q err %v, want kind %q", c.raw, kind, err, c.kind)
			}
			continue
		}
		if err != nil || next != c.next || len(tools) != len(c.tools) {
			t.Errorf("%s: %v next %q tools %q", c.raw, err, next, tools)
			continue
		}
		for i := range tools {
			if string(tools[i]) != c.tools[i] {
				t.Errorf("%s: tool %d %s, want %s", c.raw, i, tools[i], c.tools[i])
			}
		}
	}
}

func TestSplitArray(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`[]`, nil},
		{`[1]`, []string{`1`}},
		{`[{"a":[1,2]},"x,]",[[]],{"b":"\"]}"}]`, []string{`{"a":[1,2]}`, `"x,]"`, `[[]]`, `{"b":"\"]}"}`}},
		{`[{},{}]`, []string{`{}`, `{}`}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got := splitArray([]byte(c.in))
			if len(got) != len(c.want) {
				t.Fatalf("%q, want %q", got, c.want)
			}
			for i := range got {
				if string(got[i]) != c.want[i] {
					t.Errorf("element %d: %s, want %s", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestResourceMetadata(t *testing.T) {
	cases := []struct{ in, want string }{
		{`Bearer resource_metadata="https://a/x"`, "https://a/x"},
		{`Bearer realm="r", resource_metadata="https://a/\"q\""`, `https://a/"q"`},
		{`Bearer error="invalid_token",resource_metadata=https://a/y, scope="s"`, "https://a/y"},
		{`Bearer xresource_metadata="https://no"`, ""},
		{`Bearer realm="r"`, ""},
		{`Bearer resource_metadata="unterminated`, ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := resourceMetadata([]string{c.in}); got != c.want {
				t.Errorf("%q, want %q", got, c.want)
			}
		})
	}
}
