package census

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// runPython runs the Python reference (bench/reference.py, through
// testdata/pyref.py) over lines and returns its answer for each.
func runPython(t *testing.T, lines [][]byte) []outLine {
	t.Helper()
	py := testenv.Python3(t)
	ref := testenv.ReferencePy()
	if _, err := os.Stat(ref); err != nil {
		t.Fatalf("the Python reference is required: %v", err)
	}
	var in bytes.Buffer
	for i, l := range lines {
		if bytes.IndexByte(l, '\n') >= 0 {
			t.Fatalf("line %d holds a newline; it would split", i)
		}
		in.Write(l)
		in.WriteByte('\n')
	}
	file := filepath.Join(t.TempDir(), "lines.jsonl")
	if err := os.WriteFile(file, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join("testdata", "pyref.py"), ref, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 pyref.py: %v\n%s", err, stderr.Bytes())
	}
	var res []outLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		var o outLine
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("python output %q: %v", sc.Bytes(), err)
		}
		if o.Err == "" && !o.Blank && o.Tools == nil {
			o.Tools = []outTool{}
		}
		res = append(res, o)
	}
	if len(res) != len(lines) {
		t.Fatalf("python answered %d lines of %d", len(res), len(lines))
	}
	return res
}

// compareWithPython requires the fast decoder (one Decoder for all lines, so
// that state left over from a line would show), its streaming form (two
// passes on every line) and the slow reference to give CPython's answer on
// every line.
func compareWithPython(t *testing.T, names []string, lines [][]byte) {
	t.Helper()
	want := runPython(t, lines)
	d := NewDecoder()
	stream := streamer(true)
	fails := 0
	for i, line := range lines {
		fast := toOut(line, d.Decode)
		streamed := toOut(line, stream)
		slow := toOut(line, ReferenceDecode)
		for _, got := range []struct {
			who string
			out outLine
		}{{"Decoder", fast}, {"Stream", streamed}, {"ReferenceDecode", slow}} {
			if !sameOut(got.out, want[i]) {
				fails++
				if fails <= 10 {
					g, _ := json.Marshal(got.out)
					w, _ := json.Marshal(want[i])
					t.Errorf("%s: %s:\n got  %s\n want %s (CPython)\nline %.300q", names[i], got.who, g, w, line)
				}
			}
		}
	}
	if fails > 10 {
		t.Errorf("%d mismatches in all", fails)
	}
}

// sameOut compares answers; for an invalid line that is the kind of error
// and, for a record error, the BadRecord text.
func sameOut(a, b outLine) bool {
	return reflect.DeepEqual(a, b)
}

func TestPythonTricky(t *testing.T) {
	t.Parallel()
	cases := append(trickyCases(), streamCases()...)
	var names []string
	var lines [][]byte
	for _, c := range cases {
		names = append(names, c.name)
		lines = append(lines, []byte(c.line))
	}
	compareWithPython(t, names, lines)
}

func TestPythonRealCorpus(t *testing.T) {
	t.Parallel()
	lines := realcorpus.Lines(t)
	if len(lines) != 5606 {
		t.Fatalf("real corpus has %d lines, want 5606", len(lines))
	}
	names := make([]string, len(lines))
	for i := range names {
		names[i] = "real corpus line " + strconv.Itoa(i+1)
	}
	compareWithPython(t, names, lines)
}

// TestTricky holds each tricky line to its expected outcome and the fast
// decoder to the slow one, errors included (same type, offset, message).
func TestTricky(t *testing.T) {
	d := NewDecoder()
	for _, c := range trickyCases() {
		t.Run(c.name, func(t *testing.T) {
			line := []byte(c.line)
			got := "ok"
			rec, err := d.Decode(line)
			var se *SyntaxError
			var re *RecordError
			switch {
			case IsBlank(line):
				got = "blank"
			case errors.As(err, &se):
				got = "syntax"
			case errors.As(err, &re):
				got = "record"
			case err != nil:
				t.Fatalf("error of type %T: %v", err, err)
			}
			if got != c.want {
				t.Errorf("got %s (%v), want %s", got, err, c.want)
			}
			slow, serr := ReferenceDecode(line)
			if diff := diffRecords(rec, err, slow, serr); diff != "" {
				t.Errorf("Decoder and ReferenceDecode differ: %s", diff)
			}
		})
	}
}

// TestExpectedRecords pins a few answers by hand, so that a bug shared by
// the Go decoders and a misreading of the Python would still show.
func TestExpectedRecords(t *testing.T) {
	type prop struct {
		name, desc string
		req        bool
		where      string
	}
	tests := []struct {
		line  string
		shape Shape
		sid   string // "<none>" for no server id
		names []string
		props []prop // of the first tool
	}{
		{`{"server_id":-0,"tools":[{"name":"a","inputSchema":{"$defs":{"D":{"properties":{"x":{"description":"dx"}},"required":["x"]}},"properties":{"b":{"description":"1"},"a":{},"b":{"description":"2"}},"required":["a","x"]}},{"name":"z"}]}`,
			ShapeServer, "0", []string{"a", "z"},
			[]prop{{"b", "2", false, "properties"}, {"a", "", true, "properties"}, {"x", "dx", true, "$defs/D"}}},
		{`{"server_id":1.5,"server":true,"url":"u","tool":{"name":"t","inputSchema":null,"input_schema":{"properties":{"p":{"description":"\ud800"}},"definitions":{"E":{"properties":{"q":1}}}}}}`,
			ShapeTool, "u", []string{"t"},
			[]prop{{"p", "\xed\xa0\x80", false, "properties"}, {"q", "", false, "definitions/E"}}},
		{`{"name":"f","inputSchema":{"properties":{"a":{}},"properties":{"c":{"description":5}}},"server_url":12345678901234567890123}`,
			ShapeFlat, "12345678901234567890123", []string{"f"},
			[]prop{{"c", "", false, "properties"}}},
		{`{"tool":{"inputSchema":{}}, "server_id": null}`, ShapeTool, "<none>", []string{"<none>"}, nil},
	}
	d := NewDecoder()
	for _, tt := range tests {
		rec, err := d.Decode([]byte(tt.line))
		if err != nil {
			t.Errorf("%s: %v", tt.line, err)
			continue
		}
		sid := "<none>"
		if rec.HasServerID {
			sid = string(rec.ServerID)
		}
		var names []string
		for _, tl := range rec.Tools {
			if tl.HasName {
				names = append(names, string(tl.Name))
			} else {
				names = append(names, "<none>")
			}
		}
		var props []prop
		for _, p := range rec.Tools[0].Properties {
			props = append(props, prop{string(p.Name), string(p.Description), p.Required, p.WhereString()})
		}
		if rec.Shape != tt.shape || sid != tt.sid || !reflect.DeepEqual(names, tt.names) || !reflect.DeepEqual(props, tt.props) {
			t.Errorf("%s:\n got  %v %q %q %+v\n want %v %q %q %+v", tt.line, rec.Shape, sid, names, props, tt.shape, tt.sid, tt.names, tt.props)
		}
	}
}

// TestRecordErrorMessages pins the BadRecord texts.
func TestRecordErrorMessages(t *testing.T) {
	tests := []struct{ line, msg string }{
		{`[1]`, "record is not a JSON object"},
		{`{"tools":{}}`, `"tools" is not a list`},
		{`{"tools":[{},{},3]}`, `"tools"[2] is not a JSON object`},
		{`{"tool":"x"}`, `"tool" is not a JSON object`},
	}
	d := NewDecoder()
	for _, tt := range tests {
		_, err := d.Decode([]byte(tt.line))
		var re *RecordError
		if !errors.As(err, &re) || re.Msg != tt.msg || err.Error() != tt.msg {
			t.Errorf("%s: got %v, want RecordError %q", tt.line, err, tt.msg)
		}
	}
}

// TestSyntaxErrorOffsets pins where a few errors are reported.
func TestSyntaxErrorOffsets(t *testing.T) {
	tests := []struct {
		line string
		off  int
		msg  string
	}{
		{`{"a":1,}`, 7, msgKey},
		{`{"a" 1}`, 5, msgColon},
		{`[1 2]`, 3, msgComma},
		{`{"a":"b\x"}`, 7, msgEscape},
		{"{\"é\":\"\x01\"}", 7, msgControl},
		{`{"a":"bc`, 5, msgUnterminated},
		{`{} 1`, 3, msgExtra},
		{"{\"a\":\"\xff\"}", 6, msgUTF8},
		{"\ufeff{}", 0, msgBOM},
		{`{"a":-}`, 5, msgValue},
		{nest("[", "]", MaxDepth+1, ""), MaxDepth, msgDepth},
	}
	d := NewDecoder()
	for _, tt := range tests {
		_, err := d.Decode([]byte(tt.line))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != tt.off || se.Msg != tt.msg {
			t.Errorf("%.40q: got %v, want %q at %d", tt.line, err, tt.msg, tt.off)
		}
	}
}

// TestSyntaxErrorText pins whole messages as run and serve print them:
// the offset is said once ("at byte N", not "at at byte N").
func TestSyntaxErrorText(t *testing.T) {
	for _, tt := range []struct{ name, line, want string }{
		{"control", "{\"name\":\"a\x01b\"}", "Invalid control character at byte 10"},
		{"unterminated", `{"name":"ab`, "Unterminated string starting at byte 8"},
		{"comma", `[1 2]`, "Expecting ',' delimiter at byte 3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewDecoder().Decode([]byte(tt.line))
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestDecoderReuse decodes the tricky lines and the real corpus in
// different orders with one Decoder: nothing from a previous line may leak.
func TestDecoderReuse(t *testing.T) {
	var lines [][]byte
	for _, c := range trickyCases() {
		lines = append(lines, []byte(c.line))
	}
	real := realcorpus.Lines(t)
	for i := 0; i < len(real); i += 97 {
		lines = append(lines, real[i])
	}
	d := NewDecoder()
	for pass := 0; pass < 2; pass++ {
		for k := range lines {
			i := k
			if pass == 1 {
				i = len(lines) - 1 - k
			}
			got, err := d.Decode(lines[i])
			want, werr := ReferenceDecode(lines[i])
			if diff := diffRecords(got, err, want, werr); diff != "" {
				t.Fatalf("pass %d line %d: %s", pass, i, diff)
			}
		}
	}
}

func TestIsBlankMatchesPython(t *testing.T) {
	t.Parallel()
	py := testenv.Python3(t)
	out, err := exec.Command(py, "-c",
		`import sys; sys.stdout.write(",".join(str(c) for c in range(0x110000) if chr(c).isspace()))`).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[rune]bool{}
	for _, f := range strings.Split(string(out), ",") {
		var c rune
		if err := json.Unmarshal([]byte(f), &c); err != nil {
			t.Fatal(err)
		}
		want[c] = true
	}
	for c := rune(0); c < 0x110000; c++ {
		if c >= 0xd800 && c < 0xe000 {
			continue // not encodable in a strict UTF-8 line
		}
		line := []byte(string(c))
		if got := IsBlank(line); got != want[c] {
			t.Errorf("IsBlank(U+%04X) = %v, want %v", c, got, want[c])
		}
	}
	if !IsBlank(nil) || IsBlank([]byte(" x ")) || IsBlank([]byte(" \xa0")) {
		t.Error("IsBlank on empty, non-space or invalid UTF-8 lines is wrong")
	}
}

func TestShapeAndWhereStrings(t *testing.T) {
	for s, want := range map[Shape]string{ShapeServer: "server", ShapeTool: "tool", ShapeFlat: "flat", 7: "Shape(7)"} {
		if s.String() != want {
			t.Errorf("%d: %q", s, s.String())
		}
	}
	p := Property{Where: WhereDefs, DefKey: []byte("K")}
	if p.WhereString() != "$defs/K" {
		t.Error(p.WhereString())
	}
	p.Where = WhereDefinitions
	if p.WhereString() != "definitions/K" {
		t.Error(p.WhereString())
	}
	p = Property{}
	if p.WhereString() != "properties" {
		t.Error(p.WhereString())
	}
}
