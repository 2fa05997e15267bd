package census

import (
	"testing"
)

// BenchmarkCanonicalTool runs AppendCanonicalTool, as the definition hash
// does, over the tools of generated census lines: every definition
// distinct, keys in the order servers write them (rarely canonical), the
// layout of Python's json.dumps. Bytes are the tools' raw text.
func BenchmarkCanonicalTool(b *testing.B) {
	var raws [][]byte
	var size int64
	d := NewDecoder()
	for _, line := range censusLines(300) {
		rec, err := d.Decode(line)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range rec.Tools {
			raws = append(raws, append([]byte(nil), t.Raw...))
			size += int64(len(t.Raw))
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		for _, r := range raws {
			var err error
			if buf, _, _, err = AppendCanonicalTool(buf[:0], r); err != nil {
				b.Fatal(err)
			}
		}
	}
}
