package label

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

var referencePy = testenv.ReferencePy()

func goClassify(t *testing.T, in []byte) ([]byte, error) {
	t.Helper()
	var out []byte
	err := NewLabeller().ClassifyStream(bytes.NewReader(in), "stdin", func(_ Origin, tl *ToolLabels) error {
		out = tl.AppendJSON(out)
		return nil
	})
	return out, err
}

func pyClassify(t *testing.T, in []byte) []byte {
	t.Helper()
	cmd := exec.Command(testenv.Python3(t), referencePy, "classify")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference classify: %v\n%s", err, stderr.Bytes())
	}
	return out
}

// TestRealCorpusMatchesCPython classifies the real tool schemas with the
// Go decoder and classifier and with the Python reference, and requires
// byte-identical output.
func TestRealCorpusMatchesCPython(t *testing.T) {
	in := realcorpus.MustRead(t)
	got, err := goClassify(t, in)
	if err != nil {
		t.Fatal(err)
	}
	want := pyClassify(t, in)
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d differs:\n go: %.400s\n py: %.400s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("outputs differ in length: %d lines vs %d", len(gl), len(wl))
	}
	if n := bytes.Count(got, []byte{'\n'}); n != 5606 {
		t.Fatalf("%d tools classified, want 5606", n)
	}
}

// TestClassifyStreamShapesAndErrors covers the record shapes and a broken
// line: the tools before it are emitted, then a DecodeError names the line.
func TestClassifyStreamShapesAndErrors(t *testing.T) {
	good := `{"server_id": "s1", "tools": [{"name": "a", "inputSchema": {"properties": {"api_key": {}}, "required": ["api_key"]}}, {"name": "b"}]}
{"server": "s2", "tool": {"name": "c", "input_schema": {"$defs": {"D": {"properties": {"file_path": {"description": "where"}}}}}}}

{"url": 7, "name": "d", "inputSchema": {"properties": {"amount": {"description": "amount in USD"}}}}
`
	in := []byte(good)
	got, err := goClassify(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if want := pyClassify(t, in); !bytes.Equal(got, want) {
		t.Fatalf("go:\n%s\npy:\n%s", got, want)
	}
	if n := bytes.Count(got, []byte{'\n'}); n != 4 {
		t.Fatalf("%d tools, want 4", n)
	}
	bad := append(append([]byte{}, in...), []byte("{\"tools\": 3}\n{\"name\":\"e\"}\n")...)
	out, err := goClassify(t, bad)
	var le *DecodeError
	if !errors.As(err, &le) || le.Line != 5 || !strings.Contains(err.Error(), "stdin: line 5") {
		t.Fatalf("err = %v, want a DecodeError at line 5", err)
	}
	if !bytes.Equal(out, got) {
		t.Fatalf("the tools before the bad line were not all emitted")
	}
}

func TestClassifyDocument(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"type": "object", "properties": {"password": {"type": "string"}}, "required": ["password"]}`, `"required_classes": ["gg:credential-value"]`},
		{"{\n  \"name\": \"run\",\n  \"inputSchema\": {\"properties\": {\"cmd\": {}}}\n}\n", `"tool": "run", "classes": ["gg:command-string"]`},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			var out []byte
			err := NewLabeller().ClassifyDocument([]byte(tc.doc), "f.json", func(_ Origin, tl *ToolLabels) error {
				out = tl.AppendJSON(out)
				return nil
			})
			if err != nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("ClassifyDocument(%q) = %s, %v; want %s", tc.doc, out, err, tc.want)
			}
		})
	}
	if err := NewLabeller().ClassifyDocument([]byte(`{"a":`), "f.json", nil); err == nil || !strings.Contains(err.Error(), "f.json") {
		t.Errorf("bad document: %v", err)
	}
}

// TestClassifyStreamBareSchema: a bare input schema on a line gets the
// labels ClassifyDocument gives it, not an unlabelled unnamed tool.
func TestClassifyStreamBareSchema(t *testing.T) {
	for _, doc := range []string{
		`{"type":"object","properties":{"api_key":{}}}`,
		`{"properties":{"api_key":{}},"required":["api_key"]}`,
		`{"$defs":{"D":{"properties":{"api_key":{}}}}}`,
	} {
		t.Run(doc, func(t *testing.T) {
			var want, got []byte
			emitTo := func(b *[]byte) func(Origin, *ToolLabels) error {
				return func(_ Origin, tl *ToolLabels) error { *b = tl.AppendJSON(*b); return nil }
			}
			if err := NewLabeller().ClassifyDocument([]byte(doc), "f.json", emitTo(&want)); err != nil {
				t.Fatal(err)
			}
			if err := NewLabeller().ClassifyStream(strings.NewReader(doc+"\n"+doc+"\n"), "stdin", emitTo(&got)); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(want), `"gg:credential-value"`) || string(got) != string(want)+string(want) {
				t.Errorf("stream gave\n%s\nthe document gave\n%s", got, want)
			}
		})
	}
}
