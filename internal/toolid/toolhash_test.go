package toolid

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// TestSchemaFromTool requires the schema hash taken inside the tool's
// canonical text to equal the hash of the schema canonicalised alone.
func TestSchemaFromTool(t *testing.T) {
	for _, tc := range []struct{ name, line string }{
		{"plain", `{"server_id": "s", "tools": [{"name": "a", "inputSchema": {"type": "object", "properties": {"x": {}}}}]}`},
		{"strings with quotes and brackets", `{"server_id": "s", "tools": [{"name": "a\"}]", "description": "x\\\"{[", "inputSchema": {"properties": {"q\"}": {"description": "\\\\\"]}"}}}}]}`},
		{"escaped key", `{"server_id": "s", "tools": [{"name": "a", "input\u0053chema": {"b": [1, 2.50, {"c": null}], "a": true}}]}`},
		{"null inputSchema, alias", `{"server_id": "s", "tools": [{"inputSchema": null, "input_schema": {"z": 1, "y": -0}}]}`},
		{"duplicates", `{"server_id": "s", "tools": [{"inputSchema": {"a": 1}, "name": "n", "inputSchema": {"b": "\u00e9"}}]}`},
		{"flat record", `{"server_id": "s", "name": "a", "inputSchema": {"properties": {}}}`},
		{"tool shape", `{"server_id": "s", "tool": {"annotations": {"x": []}, "inputSchema": {"k": "v"}}}`},
		{"no schema", `{"server_id": "s", "tools": [{"name": "a", "inputSchema": "text"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := census.NewDecoder().Decode([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			var h Hasher
			tool := &rec.Tools[0]
			s := h.Tool(tool)
			canon, err := census.AppendCanonical(nil, tool.Raw)
			if err != nil {
				t.Fatal(err)
			}
			if s.Definition != sha256.Sum256(canon) {
				t.Error("definition hash is not the hash of the canonical tool")
			}
			// The proxy hashes the tool's bytes undecoded: the same sum.
			if d, err := new(Hasher).Definition(tool.Raw); err != nil || d != s.Definition {
				t.Errorf("Definition(raw) = %x, %v; Tool gives %x", d, err, s.Definition)
			}
			if s.HasSchema != (tool.Schema != nil) {
				t.Fatalf("HasSchema %v with schema %q", s.HasSchema, tool.Schema)
			}
			if tool.Schema == nil {
				return
			}
			want, err := census.AppendCanonical(nil, tool.Schema)
			if err != nil {
				t.Fatal(err)
			}
			if s.Schema != sha256.Sum256(want) {
				t.Errorf("schema hash differs from that of %s", want)
			}
		})
	}
}

// TestDefinitionNotJSON: bytes that are no JSON have no definition hash.
func TestDefinitionNotJSON(t *testing.T) {
	for _, raw := range []string{``, `{"a":`, `{"a":1}x`, `[1,]`} {
		if _, err := new(Hasher).Definition([]byte(raw)); err == nil {
			t.Errorf("Definition(%q) did not fail", raw)
		}
	}
}

// FuzzSchemaFromTool holds the schema hash taken inside the tool's
// canonical text to the hash of the schema canonicalised alone, on any
// record the decoder accepts, and a Batch of the record's tools to the
// hashes of each tool and schema canonicalised alone.
func FuzzSchemaFromTool(f *testing.F) {
	for _, s := range []string{
		`{"server_id": "s", "tools": [{"name": "a\"}]", "inputSchema": {"q\"}": {"d": "\\\"]}"}}}]}`,
		`{"server_id": "s", "tools": [{"inputSchema": null, "input_schema": {"z": [1e3, -0.0]}}]}`,
		`{"server_id": "s", "name": "a", "inputSchema": {"properties": {}}, "inputSchema": {"x": "\ud800"}}`,
		`{"tool": {"input\u0053chema": {"a": {"b": [[], {}]}}, "annotations": {"}": "{"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := census.NewDecoder().Decode(line)
		if err != nil {
			return
		}
		var h Hasher
		var b Batch
		for i := range rec.Tools {
			b.Add(&rec.Tools[i])
		}
		b.Hash()
		for i := range rec.Tools {
			tool := &rec.Tools[i]
			s := h.Tool(tool)
			if got, want := b.Sums(i), referenceSums(t, tool); got != want {
				t.Fatalf("tool %d: Batch gives %+v, want %+v", i, got, want)
			}
			if tool.Schema == nil {
				if s.HasSchema {
					t.Fatal("a schema hash without a schema")
				}
				continue
			}
			want, err := census.AppendCanonical(nil, tool.Schema)
			if err != nil {
				t.Fatal(err)
			}
			if s.Schema != sha256.Sum256(want) {
				t.Fatalf("tool %d: schema hash differs from that of %s", i, want)
			}
		}
	})
}

// TestMemo hashes tools decoded by one remembering Decoder (real tools
// served again and again, large ones that fill the decoder's memory and
// start it afresh, a long run of distinct ones that rests it, then the
// bundled real tools at random) through one Hasher, and requires every sum
// to be the one a fresh hash of the tool gives, and repeated texts to have
// been hashed once.
func TestMemo(t *testing.T) {
	dec := census.NewDecoder()
	dec.RememberTools()
	lines := realcorpus.Lines(t)
	synthetic := func(i, descBytes int) []byte {
		return fmt.Appendf(nil, `{"tools": [{"name": "t%d", "description": "%s", "inputSchema": {"type": "object", "properties": {"p%d": {}}}}]}`,
			i, strings.Repeat("d", descBytes), i)
	}
	var seq [][]byte
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		seq = append(seq, lines[rng.IntN(50)])
	}
	for i := range 1000 {
		seq = append(seq, synthetic(i, 10<<10))
	}
	for i := range 21000 {
		seq = append(seq, synthetic(i, 10))
	}
	// Long enough for the memory to come back after a second rest, twice
	// as long as the first, should a window straddling the distinct tools
	// and these begin one.
	for range 60000 {
		seq = append(seq, lines[rng.IntN(len(lines))])
	}
	var memo, fresh Hasher
	kept := 0
	for i, line := range seq {
		rec, err := dec.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		for j := range rec.Tools {
			tool := &rec.Tools[j]
			if _, ok := memo.memo.Get(tool); ok {
				kept++
			}
			if got, want := memo.Tool(tool), fresh.hash(tool); got != want {
				t.Fatalf("line %d tool %d: kept sums differ from a fresh hash of %.80s", i, j, tool.Raw)
			}
		}
	}
	if kept < 20000 {
		t.Errorf("only %d tools' sums came from the kept ones", kept)
	}
}
