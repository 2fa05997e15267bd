package pipeline

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/aggregate"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

func TestDefinitionTally(t *testing.T) {
	h := aggregate.NewHasher()
	var rows chunkRows
	add := func(server string, def string, schema bool) {
		rows.tools.Definition = append(rows.tools.Definition, sha256.Sum256([]byte(def)))
		rows.tools.Schema = append(rows.tools.Schema, sha256.Sum256([]byte("s"+def)))
		rows.tools.HasSchema = append(rows.tools.HasSchema, schema)
		rows.tools.Line = append(rows.tools.Line, 1)
		rows.keys = append(rows.keys, h.Key([]byte(server)))
		rows.hasServer = append(rows.hasServer, server != "")
	}
	// "shared" on 12 servers (twice on s0), "pair" on 2, "solo" on 1,
	// "anon" on no server; eleven definitions on two servers each, to
	// overflow the list.
	for i := range 12 {
		add(fmt.Sprintf("s%d", i), "shared", true)
	}
	add("s0", "shared", true)
	add("a", "pair", false)
	add("b", "pair", false)
	add("a", "solo", true)
	add("", "anon", true)
	for i := range 11 {
		add("x", fmt.Sprintf("d%02d", i), false)
		add("y", fmt.Sprintf("d%02d", i), false)
	}
	var tally definitionTally
	tally.add(&rows)
	d := tally.result()
	if d.Distinct != 4+11 || d.Shared != 2+11 || d.ToolsWithSchema != 15 || d.DistinctSchemas != 3 {
		t.Errorf("counts %+v", d)
	}
	prefix := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:16]) }
	if len(d.MostShared) != report.MostSharedN {
		t.Fatalf("%d most shared, want %d", len(d.MostShared), report.MostSharedN)
	}
	if top := d.MostShared[0]; top != (report.SharedDefinition{SHA256Prefix: prefix("shared"), Servers: 12, Tools: 13}) {
		t.Errorf("top %+v", top)
	}
	for i, s := range d.MostShared[1:] {
		if s.Servers != 2 || s.Tools != 2 || (i > 0 && s.SHA256Prefix < d.MostShared[i].SHA256Prefix) {
			t.Errorf("entry %d: %+v", i+1, s)
		}
	}
}

func TestBucketSort(t *testing.T) {
	cmpWords := func(a, b hash128) int {
		if c := cmp.Compare(a.hi, b.hi); c != 0 {
			return c
		}
		return cmp.Compare(a.lo, b.lo)
	}
	hi := func(h hash128) uint64 { return h.hi }
	for _, tc := range []struct {
		name string
		n    int
		gen  func(r *rand.Rand) hash128
	}{
		{"small", 40, func(r *rand.Rand) hash128 { return hash128{r.Uint64(), r.Uint64()} }},
		{"uniform", 5000, func(r *rand.Rand) hash128 { return hash128{r.Uint64(), r.Uint64()} }},
		{"duplicates", 5000, func(r *rand.Rand) hash128 { return hash128{r.Uint64N(50) << 58, r.Uint64N(3)} }},
		{"one bucket", 3000, func(r *rand.Rand) hash128 { return hash128{r.Uint64N(1000), r.Uint64()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			s := make([]hash128, tc.n)
			for i := range s {
				s[i] = tc.gen(r)
			}
			want := slices.Clone(s)
			slices.SortFunc(want, cmpWords)
			if got := bucketSort(s, hi, cmpWords); !slices.Equal(got, want) {
				t.Errorf("bucketSort differs from slices.SortFunc")
			}
		})
	}
}

// BenchmarkDefinitionTally measures the serial tally over the default
// census's count of tools.
func BenchmarkDefinitionTally(b *testing.B) {
	h := aggregate.NewHasher()
	var rows chunkRows
	for i := range 50000 {
		rows.tools.Definition = append(rows.tools.Definition, sha256.Sum256(fmt.Appendf(nil, "d%d", i%45000)))
		rows.tools.Schema = append(rows.tools.Schema, sha256.Sum256(fmt.Appendf(nil, "s%d", i%30000)))
		rows.tools.HasSchema = append(rows.tools.HasSchema, true)
		rows.tools.Line = append(rows.tools.Line, 1)
		rows.keys = append(rows.keys, h.Key(fmt.Appendf(nil, "srv%d", i/7)))
		rows.hasServer = append(rows.hasServer, true)
	}
	for b.Loop() {
		var tally definitionTally
		tally.add(&rows)
		tally.result()
	}
}

// TestDefinitionTallyLarge counts enough tools to fill many blocks of every
// part and checks the counts against maps.
func TestDefinitionTallyLarge(t *testing.T) {
	h := aggregate.NewHasher()
	r := rand.New(rand.NewPCG(9, 9))
	var rows chunkRows
	servers := map[[32]byte]map[aggregate.ServerKey]bool{}
	schemas := map[[32]byte]bool{}
	withSchema := 0
	for i := range 300000 {
		def := sha256.Sum256(fmt.Appendf(nil, "d%d", r.IntN(120000)))
		schema := sha256.Sum256(fmt.Appendf(nil, "s%d", r.IntN(90000)))
		key := h.Key(fmt.Appendf(nil, "srv%d", i/5))
		has := r.IntN(9) != 0
		rows.tools.Definition = append(rows.tools.Definition, def)
		rows.tools.Schema = append(rows.tools.Schema, schema)
		rows.tools.HasSchema = append(rows.tools.HasSchema, has)
		rows.tools.Line = append(rows.tools.Line, 1)
		rows.keys = append(rows.keys, key)
		rows.hasServer = append(rows.hasServer, true)
		if servers[def] == nil {
			servers[def] = map[aggregate.ServerKey]bool{}
		}
		servers[def][key] = true
		if has {
			schemas[schema] = true
			withSchema++
		}
	}
	shared := 0
	for _, s := range servers {
		if len(s) > 1 {
			shared++
		}
	}
	var tally definitionTally
	tally.add(&rows)
	d := tally.result()
	if d.Distinct != int64(len(servers)) || d.Shared != int64(shared) || d.DistinctSchemas != int64(len(schemas)) || d.ToolsWithSchema != int64(withSchema) {
		t.Errorf("counts %d/%d/%d/%d, want %d/%d/%d/%d", d.Distinct, d.Shared, d.DistinctSchemas, d.ToolsWithSchema, len(servers), shared, len(schemas), withSchema)
	}
}
