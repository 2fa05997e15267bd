package toolid

import (
	"github.com/atlas-reproduce/atlas-reproduce/internal/sha256x8"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// Batch gives tools the sums Hasher.Tool gives them, hashing many tools'
// canonical texts in one call: each tool is canonicalised when it is
// added (while the decoder is on its line), and every text is hashed by
// Hash. Where the processor has no SHA instructions, hashing several
// independent texts at once, one per vector lane, costs a fraction of
// hashing them one after another; with SHA instructions, Hash hashes them
// one after another and a Batch costs what a Hasher does.
//
// The zero value is ready; one per goroutine.
type Batch struct {
	buf   []byte
	spans []span     // each text's place in buf
	tools []batched  // each tool's texts
	msgs  [][]byte   // Hash's view of the texts
	sums  [][32]byte // their sums, after Hash
}

type span struct{ start, end int }

type batched struct {
	def, schema int32 // indices into spans; schema -1: none
}

// Add canonicalises t and keeps its texts for Hash; it returns the index
// that Sums takes once Hash has run. The schema's canonical form is part
// of the tool's: its text is that part, which the canonicaliser marks as
// it goes, rather than a second canonicalisation (unless the schema is no
// object, which the tool's text holds in another form).
func (b *Batch) Add(t *census.Tool) int {
	start := len(b.buf)
	var a, e int
	var err error
	// The decoder validated Raw and Schema: they canonicalise without
	// error, and their bytes need no second check.
	if b.buf, a, e, err = census.AppendCanonicalDecoded(b.buf, t); err != nil {
		panic("toolid: a decoded tool did not canonicalise: " + err.Error())
	}
	it := batched{def: b.text(start, len(b.buf)), schema: -1}
	if t.Schema != nil {
		// a and e index the whole buffer.
		if e > a && b.buf[a] == '{' {
			it.schema = b.text(a, e)
		} else {
			s := len(b.buf)
			if b.buf, err = census.AppendCanonical(b.buf, t.Schema); err != nil {
				panic("toolid: a decoded schema did not canonicalise: " + err.Error())
			}
			it.schema = b.text(s, len(b.buf))
		}
	}
	b.tools = append(b.tools, it)
	return len(b.tools) - 1
}

func (b *Batch) text(start, end int) int32 {
	b.spans = append(b.spans, span{start, end})
	return int32(len(b.spans) - 1)
}

// Len is the number of tools added since the last Reset.
func (b *Batch) Len() int { return len(b.tools) }

// Size is the bytes of canonical text held: a caller bounds its memory by
// hashing and resetting when it grows.
func (b *Batch) Size() int { return len(b.buf) }

// Hash hashes every text added.
func (b *Batch) Hash() {
	b.msgs = b.msgs[:0]
	for _, s := range b.spans {
		b.msgs = append(b.msgs, b.buf[s.start:s.end])
	}
	if cap(b.sums) < len(b.msgs) {
		b.sums = make([][32]byte, len(b.msgs), max(len(b.msgs), 2*cap(b.sums)))
	}
	b.sums = b.sums[:len(b.msgs)]
	sha256x8.Sum(b.msgs, b.sums)
}

// Sums returns the sums of the tool Add gave index i, once Hash has run.
func (b *Batch) Sums(i int) Sums {
	it := b.tools[i]
	s := Sums{Definition: b.sums[it.def]}
	if it.schema >= 0 {
		s.Schema, s.HasSchema = b.sums[it.schema], true
	}
	return s
}

// Reset forgets the tools added, keeping the memory for the next ones.
func (b *Batch) Reset() {
	b.buf, b.spans, b.tools = b.buf[:0], b.spans[:0], b.tools[:0]
	clear(b.msgs)
	b.msgs = b.msgs[:0]
}
