package label

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

func bodyLabels(t *testing.T, doc []byte) ([]byte, error) {
	t.Helper()
	var out []byte
	err := NewLabeller().ClassifyBody(doc, func(tl *ToolLabels) error {
		out = tl.AppendJSON(out)
		return nil
	})
	return out, err
}

func documentLabels(t *testing.T, doc []byte) ([]byte, error) {
	t.Helper()
	var out []byte
	err := NewLabeller().ClassifyDocument(doc, "f.json", func(_ Origin, tl *ToolLabels) error {
		out = tl.AppendJSON(out)
		return nil
	})
	return out, err
}

// realDocuments returns, for every real record, the record itself, its
// tool object alone and that tool's bare input schema: the three single
// document forms a service receives.
func realDocuments(t *testing.T) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, line := range realcorpus.Lines(t) {
		docs = append(docs, line)
		var rec struct {
			Tool json.RawMessage `json:"tool"`
		}
		if err := json.Unmarshal(line, &rec); err != nil || rec.Tool == nil {
			t.Fatalf("real record without a tool: %.200s", line)
		}
		docs = append(docs, rec.Tool)
		var tool struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(rec.Tool, &tool); err != nil {
			t.Fatal(err)
		}
		if tool.InputSchema != nil {
			docs = append(docs, tool.InputSchema)
		}
	}
	return docs
}

// TestClassifyBodyMatchesClassifyDocument holds the single-decode body path
// to ClassifyDocument, the classify --schema path, on every real record,
// tool and bare schema, and on the cases that decide the bare-schema test.
func TestClassifyBodyMatchesClassifyDocument(t *testing.T) {
	docs := realDocuments(t)
	bare := 0
	for _, extra := range []string{
		`{"properties": {"token": {}}}`,
		`{"$defs": {"A": {"properties": {"path": {}}}}}`,
		`{"definitions": {}}`,
		`{"type": "object"}`,
		`{"name": "x", "properties": {"cmd": {}}}`,
		`{"tool": {"name": "y"}, "properties": {"cmd": {}}}`,
		`{"tools": [], "properties": {"cmd": {}}}`,
		`{"tools": [{"name": "a"}], "properties": {"cmd": {}}}`,
		`{"inputSchema": null, "properties": {"url": {}}}`,
		`{"input_schema": {"properties": {}}, "properties": {"url": {}}}`,
		`{"properties": {"x": NaN}}`,
		`{"tools": [{"name": "a", "inputSchema": {"properties": {"amount": {}}}}, {"name": "b"}, {"name": "c"}]}`,
		"{\"properties\": {\"password\": {}}}\n\n",
	} {
		docs = append(docs, []byte(extra))
	}
	for _, doc := range docs {
		got, gerr := bodyLabels(t, doc)
		want, werr := documentLabels(t, doc)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%.300s: ClassifyBody error %v, ClassifyDocument error %v", doc, gerr, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%.300s:\n body:     %s\n document: %s", doc, got, want)
		}
		if isBareSchema(doc) {
			bare++
		}
	}
	if bare < 1000 {
		t.Fatalf("only %d bare schemas among the documents: the bare-schema path went untested", bare)
	}
}

func TestClassifyBodyErrorsAreTheDecoders(t *testing.T) {
	for _, tc := range []struct {
		doc    string
		syntax bool
		offset int
	}{
		{`{"name": "a",}`, true, 13},
		{`{"properties": {"a": }}`, true, 21},
		{"", true, 0},
		{`[1, 2]`, false, 0},
		{`{"tools": 3}`, false, 0},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			_, err := bodyLabels(t, []byte(tc.doc))
			var se *census.SyntaxError
			var re *census.RecordError
			switch {
			case tc.syntax && (!errors.As(err, &se) || se.Offset != tc.offset):
				t.Errorf("%q: %v, want a SyntaxError at byte %d", tc.doc, err, tc.offset)
			case !tc.syntax && !errors.As(err, &re):
				t.Errorf("%q: %v, want a RecordError", tc.doc, err)
			}
		})
	}
}

// TestClassifyLinesMatchesClassifyStream holds the in-memory line splitter
// to the stream reader on the real corpus and on the line-ending cases.
func TestClassifyLinesMatchesClassifyStream(t *testing.T) {
	lines := func(in []byte) ([]byte, error) {
		var out []byte
		err := NewLabeller().ClassifyLines(in, "stdin", func(o Origin, tl *ToolLabels) error {
			out = append(out, []byte(strings.Repeat("#", int(o.Line%7)))...)
			out = tl.AppendJSON(out)
			return nil
		})
		return out, err
	}
	stream := func(in []byte) ([]byte, error) {
		var out []byte
		err := NewLabeller().ClassifyStream(bytes.NewReader(in), "stdin", func(o Origin, tl *ToolLabels) error {
			out = append(out, []byte(strings.Repeat("#", int(o.Line%7)))...)
			out = tl.AppendJSON(out)
			return nil
		})
		return out, err
	}
	tool := `{"name": "a", "inputSchema": {"properties": {"api_key": {}}}}`
	for _, in := range [][]byte{
		realcorpus.MustRead(t),
		[]byte(""),
		[]byte("\n"),
		[]byte(tool),
		[]byte(tool + "\r\n\r\n" + tool + "\n \t\n" + tool),
		[]byte(tool + "\n\n\n" + tool + "\n"),
		[]byte(tool + "\n{\"tools\": 3}\n" + tool + "\n"),
		[]byte(tool + "\n" + tool + "\n{\"a\": \n"),
		[]byte("\u3000\n" + tool),
	} {
		t.Run(fmt.Sprintf("%.30q", in), func(t *testing.T) {
			got, gerr := lines(in)
			want, werr := stream(in)
			if !bytes.Equal(got, want) {
				t.Fatalf("%.200q:\n lines:  %.500s\n stream: %.500s", in, got, want)
			}
			if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
				t.Fatalf("%.200q: ClassifyLines error %v, ClassifyStream error %v", in, gerr, werr)
			}
			var le *DecodeError
			if gerr != nil && !errors.As(gerr, &le) {
				t.Fatalf("%.200q: %v is not a DecodeError", in, gerr)
			}
		})
	}
}
