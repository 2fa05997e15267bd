package pipeline

import (
	"encoding/binary"
	"hash/maphash"

	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
)

// nameOrdinals numbers each tool among the tools of its name on its
// server, in file order: with server_id and tool, the tool's identity that
// diff pairs tools by. A server's tools may be spread over many records
// (one record per tool, in the tool and flat shapes), so the count is kept
// for the run: one 16-byte digest of (server id, name) and a count per
// distinct pair, in an open-addressing table of 16 parts (about 33 bytes a
// pair at the table's average load, where a Go map took 46). The digest is of the values as tools.parquet stores them,
// nulls apart, as the diff reads them back.
type nameOrdinals struct {
	count ordinalTable
}

// nameSeeds are the two maphash seeds of a run's (server id, name) keys.
// The workers compute each tool's key with them (nameKeyer) and the sink
// only counts the keys: the hashing, per value, is off its one goroutine.
type nameSeeds [2]maphash.Seed

func newNameSeeds() nameSeeds { return nameSeeds{maphash.MakeSeed(), maphash.MakeSeed()} }

// nameKeyer computes the name-ordinal keys of a batch's tools; each
// worker has its own (it reuses a buffer).
type nameKeyer struct {
	key []byte // the digested bytes of one tool, reused
}

// keys appends the key of each of b's tools to dst and returns it.
func (n *nameKeyer) keys(seeds *nameSeeds, b *tables.ToolsBatch, dst [][2]uint64) [][2]uint64 {
	for i := range b.Len() {
		server, hasServer := b.ServerIDOf(i)
		name, hasName := b.Name.Value(i)
		// The pair's bytes once in a buffer, hashed by maphash.Bytes
		// under each seed: a maphash.Hash takes them in four writes
		// each, through its own buffer, at twice the cost.
		key := append(n.key[:0], b2u(hasServer), b2u(hasName))
		key = binary.LittleEndian.AppendUint64(key, uint64(len(server)))
		key = binary.LittleEndian.AppendUint64(key, uint64(len(name)))
		key = append(append(key, server...), name...)
		n.key = key
		dst = append(dst, [2]uint64{maphash.Bytes(seeds[0], key), maphash.Bytes(seeds[1], key)})
	}
	return dst
}

// add fills b.NameOrdinal for the batch's tools, whose keys, computed
// by a nameKeyer with the run's one nameSeeds, are keys.
func (n *nameOrdinals) add(b *tables.ToolsBatch, keys [][2]uint64) {
	b.NameOrdinal = b.NameOrdinal[:0]
	for _, k := range keys {
		b.NameOrdinal = append(b.NameOrdinal, n.count.next(k))
	}
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// ordinalTable counts keys: next returns how many times a key was seen
// before. It is 16 open-addressing tables, by the key's top bits, each
// doubling on its own, so that growing copies a sixteenth of it at a time;
// a slot is the 16-byte key and a 32-bit count of it (0: an empty
// slot). A count past 32 bits goes on in a map, which no census reaches.
type ordinalTable struct {
	parts [16]ordinalPart
	over  map[[2]uint64]int64
	n     int
}

type ordinalPart struct {
	keys   [][2]uint64
	counts []uint32
	used   int
}

// ordinalPartMin is a part's first size in slots.
const ordinalPartMin = 256

func (t *ordinalTable) next(k [2]uint64) int64 {
	p := &t.parts[k[0]>>60]
	if 4*(p.used+1) > 3*len(p.keys) {
		p.grow()
	}
	mask := uint64(len(p.keys) - 1)
	for i := k[1] & mask; ; i = (i + 1) & mask {
		c := p.counts[i]
		if c == 0 {
			p.keys[i], p.counts[i] = k, 1
			p.used++
			t.n++
			return 0
		}
		if p.keys[i] != k {
			continue
		}
		if c == ^uint32(0) {
			if t.over == nil {
				t.over = map[[2]uint64]int64{}
			}
			o := t.over[k]
			t.over[k] = o + 1
			return int64(c) + o
		}
		p.counts[i] = c + 1
		return int64(c)
	}
}

func (p *ordinalPart) grow() {
	keys, counts := p.keys, p.counts
	n := max(ordinalPartMin, 2*len(keys))
	p.keys, p.counts = make([][2]uint64, n), make([]uint32, n)
	mask := uint64(n - 1)
	for j, c := range counts {
		if c == 0 {
			continue
		}
		i := keys[j][1] & mask
		for p.counts[i] != 0 {
			i = (i + 1) & mask
		}
		p.keys[i], p.counts[i] = keys[j], c
	}
}

// bytes is the memory the table's slots hold.
func (t *ordinalTable) bytes() int64 {
	var n int64
	for i := range t.parts {
		n += int64(len(t.parts[i].keys)) * 20
	}
	return n + int64(len(t.over))*46
}
