package pipeline

import (
	"runtime/debug"
	"unsafe"
)

// DefaultMemoryRoom is the working room of the run's soft memory limit:
// what the pipeline holds beside its lasting structures (the chunks in
// flight, the largest record's rows, the table writers' row groups).
const DefaultMemoryRoom = 88 << 20

// memoryLimit keeps the process's soft memory limit (debug.SetMemoryLimit)
// at a working room plus the bytes of the run's lasting structures, the
// definitions tally and the name ordinals, raised as they grow. The
// collector then reclaims the garbage of a giant record before the heap
// doubles past what lives, as it would by GOGC alone, yet a census whose
// lasting structures outgrow any fixed figure never runs the collector
// without end: the limit grows with them.
type memoryLimit struct {
	room  int64
	set   int64 // the limit last set; 0 when none is
	prev  int64 // the limit before the run's, restored by restore
	given bool
}

// limitStep is how far the lasting structures grow before the limit is
// raised: setting it costs little, but not nothing.
const limitStep = 4 << 20

func newMemoryLimit(room int64) *memoryLimit {
	return &memoryLimit{room: room}
}

// update sets the limit for lasting bytes held, when it has moved by a
// step.
func (m *memoryLimit) update(lasting int64) {
	if m == nil || m.room <= 0 {
		return
	}
	want := m.room + lasting
	if m.set != 0 && want < m.set+limitStep {
		return
	}
	prev := debug.SetMemoryLimit(want)
	if !m.given {
		m.prev, m.given = prev, true
	}
	m.set = want
}

// restore puts back the limit the process had before the run.
func (m *memoryLimit) restore() {
	if m != nil && m.given {
		debug.SetMemoryLimit(m.prev)
		m.given, m.set = false, 0
	}
}

// bytes is the memory the tally's blocks hold.
func (t *definitionTally) bytes() int64 {
	return t.defs.bytes() + t.schemas.bytes()
}

func (b *blocks[T]) bytes() int64 {
	var n int64
	for i := range b.parts {
		n += int64(len(b.parts[i]))
	}
	var v T
	return n * blockItems * int64(unsafe.Sizeof(v))
}

// bytes is the memory the name ordinals' table holds.
func (n *nameOrdinals) bytes() int64 { return n.count.bytes() }
