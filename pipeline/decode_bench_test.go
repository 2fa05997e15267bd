package pipeline

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// BenchmarkDecodeTool times the decode stage's per-tool work (labels,
// counters, sensitivity, surface, table rows) on the real schemas, decoded
// once beforehand: the part of a run's CPU that the labelling kernel is.
func BenchmarkDecodeTool(b *testing.B) {
	var recs []*census.Record
	for _, line := range realcorpus.Lines(b) {
		rec, err := census.NewDecoder().Decode(line)
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, rec)
	}
	s := newDecodeStage("bench", false, false, 1, newRowsPool(1), newNameSeeds())
	ws := s.workers[0]
	ws.rows = new(chunkRows)
	b.ReportAllocs()
	for b.Loop() {
		for _, rec := range recs {
			for ti := range rec.Tools {
				ws.tool(rec, &rec.Tools[ti], false)
			}
		}
		ws.rows.reset()
	}
}
