package label

import (
	"bytes"
	"testing"
)

// FuzzClassifyBody holds the single-decode body path (serve) to
// ClassifyDocument (classify --schema) on any input: the same tools with the
// same labels, and an error from both or neither.
func FuzzClassifyBody(f *testing.F) {
	for _, seed := range []string{
		`{"properties": {"token": {}}}`,
		`{"$defs": {"A": {"properties": {"path": {}}}}}`,
		`{"type": "object"}`,
		`{"name": "x", "properties": {"cmd": {}}}`,
		`{"tools": [{"name": "a"}], "properties": {"cmd": {}}}`,
		`{"inputSchema": null, "properties": {"url": {}}}`,
		`{"properties": {"x": NaN}}`,
		`{"server_id": "s", "tools": [{"name": "a", "inputSchema": {"properties": {"amount": {}}}}, {"name": "b"}]}`,
		`{"server": "s", "tool": {"name": "c", "input_schema": {"required": ["api_key"], "properties": {"api_key": {"description": "\ud800"}}}}}`,
		`[1]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var body, document []byte
		berr := NewLabeller().ClassifyBody(doc, func(tl *ToolLabels) error {
			body = tl.AppendJSON(body)
			return nil
		})
		derr := NewLabeller().ClassifyDocument(doc, "f.json", func(_ Origin, tl *ToolLabels) error {
			document = tl.AppendJSON(document)
			return nil
		})
		if (berr == nil) != (derr == nil) {
			t.Fatalf("%q: ClassifyBody error %v, ClassifyDocument error %v", doc, berr, derr)
		}
		if !bytes.Equal(body, document) {
			t.Fatalf("%q:\n body:     %s\n document: %s", doc, body, document)
		}
	})
}
