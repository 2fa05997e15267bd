package census

import (
	"testing"
)

// One Decoder for a whole fuzzing run, so that state carried from one input
// to the next would show as a difference.
var fuzzDecoder, fuzzStreamer = NewDecoder(), NewDecoder()

// FuzzDecode holds Decoder.Decode, and Stream with Next in two passes, to
// ReferenceDecode on arbitrary bytes: the same error (type, offset,
// message) or the same record.
func FuzzDecode(f *testing.F) {
	for _, c := range append(trickyCases(), streamCases()...) {
		if len(c.line) < 4096 {
			f.Add([]byte(c.line))
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := fuzzDecoder.Decode(line)
		want, werr := ReferenceDecode(line)
		if diff := diffRecords(got, err, want, werr); diff != "" {
			t.Fatalf("Decoder and ReferenceDecode differ: %s\nline %q", diff, line)
		}
		got, err = streamDecode(fuzzStreamer, line, true)
		if diff := diffRecords(got, err, want, werr); diff != "" {
			t.Fatalf("Stream and ReferenceDecode differ: %s\nline %q", diff, line)
		}
	})
}

// enumerateWrappers place a fuzzed input schema in each record shape and
// next to the keys it could be confused with.
var enumerateWrappers = [][2]string{
	{`{"server_id":"s","tools":[{"name":"t","inputSchema":`, `}]}`},
	{`{"tool":{"inputSchema":null,"input_schema":`, `}}`},
	{`{"name":"flat","inputSchema":`, `,"server":1}`},
	{`{"tools":[{"inputSchema":{"properties":{"first":{}}},"inputSchema":`, `},{"name":"next","inputSchema":{"properties":{"n":{}}}}]}`},
}

// FuzzEnumerate aims the fuzzer at property enumeration: the input is an
// input schema, decoded inside each record shape by both decoders.
func FuzzEnumerate(f *testing.F) {
	seeds := []string{
		`{"type":"object","properties":{"path":{"type":"string","description":"file path"}},"required":["path"]}`,
		`{"properties":{"a":{"description":"1"},"b":{},"a":{"description":"2"}},"properties":{"c":1},"required":["a","c",1]}`,
		`{"$defs":{"D":{"properties":{"x":{}},"required":["x"]},"E":5,"D":{"properties":{"y":{}}}},"properties":{"p":{}},"definitions":{"F":{"properties":{"z":{"description":"\ud800"}}}}}`,
		`{"definitions":{"A":{"properties":{"\u0061":{},"a":{"description":"d"}},"required":"a"}},"required":["a"]}`,
		`null`,
		`[{"properties":{"a":{}}}]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		for _, w := range enumerateWrappers {
			line := make([]byte, 0, len(w[0])+len(schema)+len(w[1]))
			line = append(append(append(line, w[0]...), schema...), w[1]...)
			got, err := fuzzDecoder.Decode(line)
			want, werr := ReferenceDecode(line)
			if diff := diffRecords(got, err, want, werr); diff != "" {
				t.Fatalf("Decoder and ReferenceDecode differ: %s\nline %q", diff, line)
			}
			got, err = streamDecode(fuzzStreamer, line, true)
			if diff := diffRecords(got, err, want, werr); diff != "" {
				t.Fatalf("Stream and ReferenceDecode differ: %s\nline %q", diff, line)
			}
		}
	})
}
