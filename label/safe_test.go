package label

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// TestResultsAreTheCallers mutates and appends to every slice of each
// result in the callback, and requires every later result (and a second
// labelling of the same input) to be unchanged: no field aliases a slice
// of the package or of another result.
func TestResultsAreTheCallers(t *testing.T) {
	in := []byte(`{"tools": [
		{"name": "a", "inputSchema": {"properties": {"api_key": {}, "path": {}, "clientSecret": {}}, "required": ["api_key"]}},
		{"name": "b", "inputSchema": {"properties": {"file_path": {}, "clientSecret": {}}, "required": ["clientSecret"]}},
		{"name": "c", "inputSchema": {"properties": {"token": {}, "path": {}, "clientSecret": {}}, "required": ["token"]}}]}`)
	render := func(mutate bool) []string {
		var out []string
		err := NewLabeller().WithSensitivity().Record(in, func(tl *ToolLabels) error {
			out = append(out, string(tl.AppendJSON(nil)))
			if !mutate {
				return nil
			}
			for _, ss := range allSlices(tl) {
				for i := range ss {
					ss[i] = "changed"
				}
				_ = append(ss, "appended")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, got := render(false), render(true)
	if !slices.Equal(got, want) {
		t.Fatalf("a change to one result shows in another:\n got: %q\nwant: %q", got, want)
	}
	if again := render(false); !slices.Equal(again, want) {
		t.Fatalf("a change to a result shows in a later labelling:\n got: %q\nwant: %q", again, want)
	}
	if !strings.Contains(want[0], `"classes": ["gg:credential-value", "gg:filesystem-path"]`) ||
		!strings.Contains(want[1], `"camel_case": {"classes": ["gg:credential-value"], "required_classes": ["gg:credential-value"]}`) {
		t.Fatalf("the test input lost its classes: %s", want[1])
	}
}

// allSlices are the string slices of a result.
func allSlices(tl *ToolLabels) [][]string {
	out := [][]string{tl.Classes, tl.RequiredClasses, tl.Buckets}
	for i := range tl.Properties {
		out = append(out, tl.Properties[i].Classes, tl.Properties[i].Buckets)
	}
	if s := tl.Sensitivity; s != nil {
		out = append(out, s.CamelCase.Classes, s.CamelCase.RequiredClasses, s.WordSplit.Classes, s.WordSplit.RequiredClasses, s.Deep.Classes)
	}
	return out
}

// TestMarshalIsAppendJSON holds json.Marshal of every result of the real
// corpus, with and without sensitivity, to AppendJSON: the same bytes once
// AppendJSON's Python spacing is compacted away (and json's HTML escaping
// is off, as AppendJSON writes < > & as they are).
func TestMarshalIsAppendJSON(t *testing.T) {
	in := realcorpus.MustRead(t)
	for _, sens := range []bool{false, true} {
		l := NewLabeller()
		if sens {
			l.WithSensitivity()
		}
		n := 0
		var marshalled, compact bytes.Buffer
		enc := json.NewEncoder(&marshalled)
		enc.SetEscapeHTML(false)
		err := l.ClassifyStream(bytes.NewReader(in), "real", func(o Origin, tl *ToolLabels) error {
			n++
			marshalled.Reset()
			compact.Reset()
			if err := enc.Encode(tl); err != nil {
				return err
			}
			if err := json.Compact(&compact, tl.AppendJSON(nil)); err != nil {
				return err
			}
			compact.WriteByte('\n')
			if !bytes.Equal(marshalled.Bytes(), compact.Bytes()) {
				t.Fatalf("line %d: json.Marshal and AppendJSON differ:\n marshal: %.600s\n append:  %.600s", o.Line, marshalled.Bytes(), compact.Bytes())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != realcorpus.Tools {
			t.Fatalf("%d tools, want %d", n, realcorpus.Tools)
		}
	}
}

// TestDocument labels the three document kinds in one call, and the same
// results come out as ClassifyBody emits.
func TestDocument(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string // tool names ("" for none) and their classes
	}{
		{"tool", `{"name": "run", "inputSchema": {"properties": {"cmd": {}}, "required": ["cmd"]}}`, []string{"run [gg:command-string]"}},
		{"tools/list", `{"tools": [{"name": "a", "inputSchema": {"properties": {"url": {}}}}, {"name": "b"}]}`, []string{"a [gg:url-endpoint]", "b []"}},
		{"bare schema", `{"type": "object", "properties": {"password": {}}}`, []string{" [gg:credential-value]"}},
		{"empty list", `{"tools": []}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Document([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range got {
				name := ""
				if tl.Tool != nil {
					name = *tl.Tool
				}
				names = append(names, name+" ["+strings.Join(tl.Classes, " ")+"]")
			}
			if !slices.Equal(names, tc.want) {
				t.Fatalf("Document(%s) = %q, want %q", tc.doc, names, tc.want)
			}
			body, err := bodyLabels(t, []byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			var fromDoc []byte
			for i := range got {
				fromDoc = got[i].AppendJSON(fromDoc)
			}
			if !bytes.Equal(fromDoc, body) {
				t.Fatalf("Document and ClassifyBody differ:\n%s\n%s", fromDoc, body)
			}
		})
	}
}

// TestDecodeError checks what a caller of each entry finds in a bad
// input's error: the file and line where there are some, the byte offset
// of a syntax error, -1 for valid JSON that is no record, and the
// decoder's own error beneath.
func TestDecodeError(t *testing.T) {
	collect := func(_ Origin, _ *ToolLabels) error { return nil }
	for _, tc := range []struct {
		name   string
		call   func() error
		want   DecodeError
		syntax bool
		msg    string
	}{
		{"Document syntax", func() error { _, err := Document([]byte(`{"name": "a",}`)); return err },
			DecodeError{Offset: 13}, true, "Expecting property name enclosed in double quotes at byte 13"},
		{"Document bare schema the decoder refuses", func() error {
			_, err := Document([]byte(`{"type": "object", "properties": {"a": {"default": ` + strings.Repeat("7", 5000) + `}}}`))
			return err
		}, DecodeError{Offset: 51}, true, "integer literal exceeds the 4300-digit limit at byte 51"},
		{"ClassifyDocument bare schema", func() error {
			return NewLabeller().ClassifyDocument([]byte(`{"properties": {"a": {"default": `+strings.Repeat("7", 5000)+`}}}`), "s.json", collect)
		}, DecodeError{File: "s.json", Offset: 33}, true, "s.json: integer literal exceeds the 4300-digit limit at byte 33"},
		{"Document record", func() error { _, err := Document([]byte(`{"tools": 3}`)); return err },
			DecodeError{Offset: -1}, false, ""},
		{"ClassifyDocument", func() error { return NewLabeller().ClassifyDocument([]byte(`{"a":`), "f.json", collect) },
			DecodeError{File: "f.json", Offset: 5}, true, "f.json: "},
		{"ClassifyLines", func() error {
			return NewLabeller().ClassifyLines([]byte("{\"tools\": []}\n\n{\"tools\": [1,]}\n"), "in.jsonl", collect)
		}, DecodeError{File: "in.jsonl", Line: 3, Offset: 13}, true, "in.jsonl: line 3: "},
		{"ClassifyStream", func() error {
			return NewLabeller().ClassifyStream(strings.NewReader("{\"tools\": []}\n[1]\n"), "stdin", collect)
		}, DecodeError{File: "stdin", Line: 2, Offset: -1}, false, "stdin: line 2: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("%v is not a *DecodeError", err)
			}
			if de.File != tc.want.File || de.Line != tc.want.Line || de.Offset != tc.want.Offset {
				t.Errorf("got file %q line %d offset %d, want %q %d %d", de.File, de.Line, de.Offset, tc.want.File, tc.want.Line, tc.want.Offset)
			}
			var se *census.SyntaxError
			var re *census.RecordError
			if tc.syntax && !errors.As(err, &se) || !tc.syntax && !errors.As(err, &re) {
				t.Errorf("%v: the decoder's error is not beneath (syntax %v)", err, tc.syntax)
			}
			if !strings.HasPrefix(err.Error(), tc.msg) {
				t.Errorf("message %q, want it to start with %q", err, tc.msg)
			}
		})
	}
}
