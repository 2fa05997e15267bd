package jsontext

import (
	"encoding/json"
	"testing"
)

func TestAppendString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`a<b>&c`, `"a<b>&c"`},
		{"quote \" and \\ and \n", `"quote \" and \\ and \n"`},
		{"é\u2028", "\"é\\u2028\""},
	} {
		got := string(AppendString([]byte("x"), tc.in))
		if got != "x"+tc.want {
			t.Errorf("AppendString(%q) = %s, want x%s", tc.in, got, tc.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got[1:]), &back); err != nil || back != tc.in {
			t.Errorf("%s reads back as %q, %v", got[1:], back, err)
		}
	}
}

func TestAppendPy(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1,"b":[1,2]}`, `{"a": 1, "b": [1, 2]}`},
		{`{"k:v":"x,y","e":"\",:"}`, `{"k:v": "x,y", "e": "\",:"}`},
		{`["\\",1]`, `["\\", 1]`},
	} {
		if got := string(AppendPy(nil, json.RawMessage(tc.in))); got != tc.want {
			t.Errorf("AppendPy(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestStrings(t *testing.T) {
	// The quotes belong to their string; an escaped quote or backslash
	// does not end it.
	in := `{"a\"b":"c\\",d:1}`
	want := "011111101111100000"
	var s Strings
	got := make([]byte, len(in))
	for i := range len(in) {
		got[i] = '0'
		if s.Inside(in[i]) {
			got[i] = '1'
		}
	}
	if string(got) != want {
		t.Errorf("inside %s\n       %s, want\n       %s", in, got, want)
	}
}
