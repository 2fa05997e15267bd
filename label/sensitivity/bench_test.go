package sensitivity_test

import (
	"bytes"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

// BenchmarkDeep walks every input schema of the real corpus whole
// (Labels), the deep variant's worst case: its cost is the lexer's skips
// and strings plus the classification of every nested property.
func BenchmarkDeep(b *testing.B) {
	var schemas [][]byte
	var size int64
	d := census.NewDecoder()
	for _, line := range bytes.Split(bytes.TrimSpace(realcorpus.MustRead(b)), []byte{'\n'}) {
		rec, err := d.Decode(line)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range rec.Tools {
			if t.Schema != nil {
				schemas = append(schemas, bytes.Clone(t.Schema))
				size += int64(len(t.Schema))
			}
		}
	}
	var w sensitivity.Deep
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range schemas {
			w.Labels(s)
		}
	}
}
