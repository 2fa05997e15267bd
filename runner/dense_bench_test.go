package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// BenchmarkRunDense times the whole run on the property-dense census of
// the snapshot's size (synth --dense: about four properties a tool with
// short descriptions), where decoding and the properties table cost most
// per byte.
func BenchmarkRunDense(b *testing.B) {
	data := b.TempDir()
	opt := synth.DefaultOptions()
	opt.Dense = true
	if _, err := synth.Write(context.Background(), data, opt); err != nil {
		b.Fatal(err)
	}
	m, err := hashverify.ReadSHA256Sums(filepath.Join(data, synth.SumsFile))
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		r, err := Run(context.Background(), Options{Data: data, Out: out, Manifest: m, ManifestName: "SHA256SUMS"})
		if err != nil {
			b.Fatal(err)
		}
		if r.Tools != int64(opt.Tools) {
			b.Fatalf("%d tools", r.Tools)
		}
	}
	b.StopTimer()
	b.SetBytes(gunzippedSize(b, filepath.Join(data, hashverify.ToolsFile)))
}
