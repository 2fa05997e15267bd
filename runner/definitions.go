package runner

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"slices"

	"github.com/atlas-reproduce/atlas-reproduce/aggregate"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// definitionTally counts distinct definitions and input schemas, and how
// many servers serve each definition. It keeps 24 bytes per tool (the
// first 16 bytes of the definition hash, which identify it among billions
// of definitions, and 64 bits of the server's key) plus 16 per input
// schema, sorted once at the end: about 9 MB for the default census and
// 37 MB at 4×. Distinct counts need every hash; sorted slices hold them at
// a third of a map's cost.
type definitionTally struct {
	defs    []defServer
	schemas [][16]byte
}

type defServer struct {
	def    [16]byte
	server uint64 // 0: no server id
}

// add takes the tools of one chunk.
func (t *definitionTally) add(rows *chunkRows) {
	b := &rows.tools
	for i := range b.Len() {
		d := defServer{def: [16]byte(b.Definition[i][:16])}
		if rows.hasServer[i] {
			d.server = serverWord(rows.keys[i])
		}
		t.defs = append(t.defs, d)
		if b.HasSchema[i] {
			t.schemas = append(t.schemas, [16]byte(b.Schema[i][:16]))
		}
	}
}

// serverWord is a non-zero 64-bit word of a server key (one in 2^64 is
// moved off 0, which marks a tool without a server id).
func serverWord(k aggregate.ServerKey) uint64 { return max(k[0], 1) }

// result sorts the hashes and counts them.
func (t *definitionTally) result() *report.Definitions {
	d := &report.Definitions{ToolsWithSchema: int64(len(t.schemas)), MostShared: []report.SharedDefinition{}}
	// Any total order groups equal hashes; comparing words is cheaper
	// than comparing bytes.
	slices.SortFunc(t.schemas, func(a, b [16]byte) int {
		if c := cmp.Compare(binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])); c != 0 {
			return c
		}
		return cmp.Compare(binary.BigEndian.Uint64(a[8:]), binary.BigEndian.Uint64(b[8:]))
	})
	for i := range t.schemas {
		if i == 0 || t.schemas[i] != t.schemas[i-1] {
			d.DistinctSchemas++
		}
	}
	slices.SortFunc(t.defs, func(a, b defServer) int {
		if c := cmp.Compare(binary.BigEndian.Uint64(a.def[:8]), binary.BigEndian.Uint64(b.def[:8])); c != 0 {
			return c
		}
		if c := cmp.Compare(binary.BigEndian.Uint64(a.def[8:]), binary.BigEndian.Uint64(b.def[8:])); c != 0 {
			return c
		}
		return cmp.Compare(a.server, b.server)
	})
	var top []report.SharedDefinition
	for i := 0; i < len(t.defs); {
		j, servers := i, int64(0)
		for ; j < len(t.defs) && t.defs[j].def == t.defs[i].def; j++ {
			if s := t.defs[j].server; s != 0 && (j == i || s != t.defs[j-1].server) {
				servers++
			}
		}
		d.Distinct++
		if servers > 1 {
			d.Shared++
			top = keepTop(top, report.SharedDefinition{SHA256Prefix: hex.EncodeToString(t.defs[i].def[:]), Servers: servers, Tools: int64(j - i)})
		}
		i = j
	}
	d.MostShared = append(d.MostShared, top...)
	return d
}

// keepTop inserts s into top, kept sorted by servers, then tools (both
// descending), then hash, and at most report.MostSharedN long.
func keepTop(top []report.SharedDefinition, s report.SharedDefinition) []report.SharedDefinition {
	less := func(a, b report.SharedDefinition) int {
		if c := cmp.Compare(b.Servers, a.Servers); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Tools, a.Tools); c != 0 {
			return c
		}
		return cmp.Compare(a.SHA256Prefix, b.SHA256Prefix)
	}
	if len(top) == report.MostSharedN && less(s, top[len(top)-1]) >= 0 {
		return top
	}
	i, _ := slices.BinarySearchFunc(top, s, less)
	top = slices.Insert(top, i, s)
	return top[:min(len(top), report.MostSharedN)]
}
