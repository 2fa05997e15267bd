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

// BenchmarkRunNearMiss times the whole run on the near-miss census of the
// held-back census's shape (synth --near-miss --servers 13502): small
// schemas, a vocabulary of near-misses of the rules' words, every
// definition distinct.
func BenchmarkRunNearMiss(b *testing.B) {
	opt := synth.DefaultOptions()
	opt.NearMiss, opt.Servers = true, 13502
	benchRun(b, opt)
}
