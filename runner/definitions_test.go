package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
