package pipeline

import (
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
	"math/bits"
	"slices"

	"github.com/atlas-reproduce/atlas-reproduce/aggregate"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// definitionTally counts distinct definitions and input schemas, and how
// many servers serve each definition. It keeps 24 bytes per tool (the
// first 16 bytes of the definition hash, which identify it among billions
// of definitions, and 64 bits of the server's key) plus 16 per input
// schema: about 9 MB for the default census and 37 MB at 4×. Distinct
// counts need every hash; sorted, they cost a third of a map's memory.
//
// The entries are kept in fixed-size blocks, parted by the hash's top
// bits as they come: no slice grows by doubling (which held the old and
// the new array at once, up to three times the entries), and at the end
// each part is gathered and sorted alone, so the sort needs one part's
// room beside the blocks, not a second copy of them all.
type definitionTally struct {
	defs    blocks[defServer]
	schemas blocks[hash128]
}

// hash128 is the first 16 bytes of a SHA-256 as two big-endian words, so
// that ordering compares words, not bytes.
type hash128 struct{ hi, lo uint64 }

func wordsOf(h *tables.Hash) hash128 {
	return hash128{binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:16])}
}

type defServer struct {
	def    hash128
	server uint64 // 0: no server id
}

// The tally's parts and blocks: 16 parts by the top 4 bits of a hash, in
// blocks of 512 entries (12 KiB of definitions, 8 KiB of schemas), so
// that the partly filled last blocks waste at most 320 KiB in all, and the
// part sorted at the end is about a sixteenth of the entries.
const (
	partBits   = 4
	blockItems = 512
)

// blocks holds entries in fixed-size blocks, per part.
type blocks[T any] struct {
	parts [1 << partBits][][]T
	n     int64
}

func (b *blocks[T]) add(part uint64, v T) {
	p := &b.parts[part]
	if k := len(*p); k == 0 || len((*p)[k-1]) == blockItems {
		*p = append(*p, make([]T, 0, blockItems))
	}
	last := &(*p)[len(*p)-1]
	*last = append(*last, v)
	b.n++
}

// each calls fn with the entries of every part in turn, gathered into one
// slice that fn may reorder, and lets go of the part's blocks.
func (b *blocks[T]) each(fn func([]T)) {
	var s []T
	for i := range b.parts {
		s = s[:0]
		for _, blk := range b.parts[i] {
			s = append(s, blk...)
		}
		b.parts[i] = nil
		fn(s)
	}
}

// add takes the tools of one chunk.
func (t *definitionTally) add(rows *chunkRows) {
	b := &rows.tools
	for i := range b.Len() {
		d := defServer{def: wordsOf(&b.Definition[i])}
		if rows.hasServer[i] {
			d.server = serverWord(rows.keys[i])
		}
		t.defs.add(d.def.hi>>(64-partBits), d)
		if b.HasSchema[i] {
			h := wordsOf(&b.Schema[i])
			t.schemas.add(h.hi>>(64-partBits), h)
		}
	}
}

// serverWord is a non-zero 64-bit word of a server key (one in 2^64 is
// moved off 0, which marks a tool without a server id).
func serverWord(k aggregate.ServerKey) uint64 { return max(k[0], 1) }

// result sorts the hashes, part by part, and counts them. Equal hashes
// are in one part, so each part counts alone.
func (t *definitionTally) result() *report.Definitions {
	d := &report.Definitions{ToolsWithSchema: t.schemas.n, MostShared: []report.SharedDefinition{}}
	// Within a part the top bits are equal: the sort buckets on the bits
	// below them. Any total order groups equal hashes.
	t.schemas.each(func(s []hash128) {
		s = bucketSort(s, func(h hash128) uint64 { return h.hi << partBits }, func(a, b hash128) int {
			if c := cmp.Compare(a.hi, b.hi); c != 0 {
				return c
			}
			return cmp.Compare(a.lo, b.lo)
		})
		for i := range s {
			if i == 0 || s[i] != s[i-1] {
				d.DistinctSchemas++
			}
		}
	})
	var top []report.SharedDefinition
	t.defs.each(func(s []defServer) {
		s = bucketSort(s, func(v defServer) uint64 { return v.def.hi << partBits }, func(a, b defServer) int {
			if c := cmp.Compare(a.def.hi, b.def.hi); c != 0 {
				return c
			}
			if c := cmp.Compare(a.def.lo, b.def.lo); c != 0 {
				return c
			}
			return cmp.Compare(a.server, b.server)
		})
		for i := 0; i < len(s); {
			j, servers := i, int64(0)
			for ; j < len(s) && s[j].def == s[i].def; j++ {
				if v := s[j].server; v != 0 && (j == i || v != s[j-1].server) {
					servers++
				}
			}
			d.Distinct++
			if servers > 1 {
				d.Shared++
				var prefix [16]byte
				binary.BigEndian.PutUint64(prefix[:8], s[i].def.hi)
				binary.BigEndian.PutUint64(prefix[8:], s[i].def.lo)
				top = keepTop(top, report.SharedDefinition{SHA256Prefix: hex.EncodeToString(prefix[:]), Servers: servers, Tools: int64(j - i)})
			}
			i = j
		}
	})
	d.MostShared = append(d.MostShared, top...)
	return d
}

// bucketSort sorts s by compare, whose order must begin with the order
// of top. Hashes are uniform, so a counting pass on top's high bits into
// about one bucket per two items, then each bucket sorted alone, is
// linear, where a comparison sort of the whole costs n log n compares:
// the sort was most of the tally's serial time. Buckets many equal
// hashes crowd (one definition on many servers) still sort in n log n.
func bucketSort[T any](s []T, top func(T) uint64, compare func(a, b T) int) []T {
	if len(s) < 64 {
		slices.SortFunc(s, compare)
		return s
	}
	shift := 64 - bits.Len(uint(len(s)/2))
	counts := make([]int, 1<<(64-shift)+1)
	for _, v := range s {
		counts[top(v)>>shift+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	// In place, by cycles (American flag sort): no second copy of s.
	next := slices.Clone(counts[:len(counts)-1])
	for b := range next {
		for next[b] < counts[b+1] {
			v := s[next[b]]
			for tb := int(top(v) >> shift); tb != b; tb = int(top(v) >> shift) {
				v, s[next[tb]] = s[next[tb]], v
				next[tb]++
			}
			s[next[b]] = v
			next[b]++
		}
	}
	for b := range len(counts) - 1 {
		bucket := s[counts[b]:counts[b+1]]
		if len(bucket) < 12 {
			insertionSort(bucket, compare)
		} else {
			slices.SortFunc(bucket, compare)
		}
	}
	return s
}

func insertionSort[T any](s []T, compare func(a, b T) int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && compare(s[j-1], s[j]) > 0; j-- {
			s[j-1], s[j] = s[j], s[j-1]
		}
	}
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
