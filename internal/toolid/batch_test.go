package toolid

import (
	"crypto/sha256"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// TestBatchSums gives the real corpus's tools, and tools whose
// schema is no object or missing, to a Batch in rounds of different
// sizes and holds each tool's sums to the hashes of the tool and of its
// schema, each canonicalised alone (referenceSums).
// Each tool is added while the decoder is on its line, as the pipeline
// adds them, and read back after Hash, once the decoder has moved on.
func TestBatchSums(t *testing.T) {
	lines := realcorpus.Lines(t)
	lines = append(lines,
		[]byte(`{"server_id": "s", "tools": [{"name": "a", "inputSchema": "text"}, {"name": "b"}, {"name": "c", "inputSchema": null, "input_schema": [1, {"b": 2, "a": 1}]}]}`),
		[]byte(`{"server_id": "s", "tools": [{"name": "d", "inputSchema": {"type": "object"}}, {"inputSchema": {"type": "object"}, "name": "e"}]}`))
	dec := census.NewDecoder()
	var b Batch
	var want []Sums
	check := func(round int) {
		b.Hash()
		if b.Len() != len(want) {
			t.Fatalf("round %d: Len %d, want %d", round, b.Len(), len(want))
		}
		for i := range want {
			if got := b.Sums(i); got != want[i] {
				t.Fatalf("round %d, tool %d: Batch gives %x/%x/%v, want %x/%x/%v", round, i,
					got.Definition[:4], got.Schema[:4], got.HasSchema, want[i].Definition[:4], want[i].Schema[:4], want[i].HasSchema)
			}
		}
		b.Reset()
		want = want[:0]
	}
	round, n := 0, 0
	for i, line := range lines {
		if _, err := dec.Stream(line); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		for {
			tool, err := dec.Next()
			if err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
			if tool == nil {
				break
			}
			want = append(want, referenceSums(t, tool))
			if got := b.Add(tool); got != len(want)-1 {
				t.Fatalf("Add gave index %d, want %d", got, len(want)-1)
			}
			n++
		}
		// Rounds of 1, 2, 3, ... lines: batches of many sizes.
		if len(want) > 0 && (i%(round+1) == 0 || i == len(lines)-1) {
			check(round)
			round++
		}
	}
	if n < 100 || round < 10 {
		t.Fatalf("only %d tools in %d rounds", n, round)
	}
}

// referenceSums hashes the canonical form of the tool's whole text and,
// when it has a schema, that of the schema canonicalised on its own.
func referenceSums(t testing.TB, tool *census.Tool) Sums {
	t.Helper()
	def, err := census.AppendCanonical(nil, tool.Raw)
	if err != nil {
		t.Fatal(err)
	}
	s := Sums{Definition: sha256.Sum256(def)}
	if tool.Schema != nil {
		schema, err := census.AppendCanonical(nil, tool.Schema)
		if err != nil {
			t.Fatal(err)
		}
		s.Schema, s.HasSchema = sha256.Sum256(schema), true
	}
	return s
}
