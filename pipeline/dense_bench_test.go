package pipeline

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// BenchmarkRunDense times the whole run on the property-dense census of
// the snapshot's size (synth --dense: about four properties a tool with
// short descriptions), where decoding and the properties table cost most
// per byte.
func BenchmarkRunDense(b *testing.B) {
	opt := synth.DefaultOptions()
	opt.Dense = true
	benchRun(b, opt)
}
