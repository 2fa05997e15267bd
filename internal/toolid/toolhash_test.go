package toolid

import (
	"crypto/sha256"
	"fmt"
	"hash/maphash"
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
// record the decoder accepts.
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
		for i := range rec.Tools {
			tool := &rec.Tools[i]
			s := h.Tool(tool)
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

// TestMemo hashes tools in an order that takes the memo through its
// states (hits on a few definitions served again and again, large ones
// that fill it and start it afresh, a long run of distinct ones that rests
// it, then the bundled real tools at random) through one Hasher, and
// requires every sum to be the one a fresh hash of the tool gives.
func TestMemo(t *testing.T) {
	decode := func(line []byte) *census.Tool {
		rec, err := census.NewDecoder().Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		return &rec.Tools[0]
	}
	lines := realcorpus.Lines(t)
	real := make([]*census.Tool, len(lines))
	for i, line := range lines {
		real[i] = decode(line)
	}
	synthetic := func(i, descBytes int) *census.Tool {
		return decode(fmt.Appendf(nil, `{"tools": [{"name": "t%d", "description": "%s", "inputSchema": {"type": "object", "properties": {"p%d": {}}}}]}`,
			i, strings.Repeat("d", descBytes), i))
	}
	var seq []*census.Tool
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		seq = append(seq, real[rng.IntN(50)])
	}
	for i := range 2 * memoBytes / (10 << 10) {
		seq = append(seq, synthetic(i, 10<<10))
	}
	for i := range memoWarm + memoRest + 2*memoWindow {
		seq = append(seq, synthetic(i, 10))
	}
	for range 20000 {
		seq = append(seq, real[rng.IntN(len(real))])
	}
	var memo, fresh Hasher
	rested, restarted := false, false
	for i, tool := range seq {
		before := len(memo.entries)
		if got, want := memo.Tool(tool), fresh.hash(tool); got != want {
			t.Fatalf("tool %d: remembered sums differ from a fresh hash of %.80s", i, tool.Raw)
		}
		rested = rested || memo.rest > 0
		restarted = restarted || len(memo.entries) < before
	}
	if !rested || !restarted {
		t.Errorf("the sequence did not take the memo through its states: rested %v, restarted %v", rested, restarted)
	}
}

// TestMemoCollision puts one tool's sums under another tool's key, as a
// collision of the 64-bit key would, and requires the Hasher to hash the
// second tool rather than take the first one's sums.
func TestMemoCollision(t *testing.T) {
	dec := func(line string) *census.Tool {
		rec, err := census.NewDecoder().Decode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		return &rec.Tools[0]
	}
	a := dec(`{"server_id": "s", "tools": [{"name": "a", "inputSchema": {"type": "object"}}]}`)
	b := dec(`{"server_id": "s", "tools": [{"name": "b", "inputSchema": {"type": "object"}}]}`)
	var h, fresh Hasher
	sa := h.Tool(a)
	ka, kb := maphash.Bytes(h.seed, a.Raw), maphash.Bytes(h.seed, b.Raw)
	h.memo[kb] = h.memo[ka]
	if got, want := h.Tool(b), fresh.hash(b); got != want || got == sa {
		t.Fatal("a colliding key gave another tool's sums")
	}
}
