package tables

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
)

// strDict numbers a row group's distinct strings in the order they first
// come, for writeStrings: value id is dict[ends[id]:ends[id+1]]. It is an
// open-addressing table over the ids, whose keys are the dictionary's own
// bytes: a new value costs one append to dict, where a Go map keyed by
// string would allocate a copy of it, and a lookup one hash and, on a
// match of the hash's tag, one comparison.
type strDict struct {
	seed  maphash.Seed
	key   uint64 // mixed into hash's short-value hash, random per table
	dict  []byte
	ends  []int32 // ends[0] == 0; value id ends at ends[id+1]
	slots []dictSlot
	// hashes holds each id's hash, to place it again when the table grows.
	hashes []uint64
}

// dictSlot is a slot of the table: id+1 (0 for an empty slot) and the top
// bits of the value's hash, compared before the bytes.
type dictSlot struct {
	tag uint32
	id  int32
}

// reset empties the dictionary, keeping its memory.
func (d *strDict) reset() {
	if d.slots == nil {
		d.seed, d.key = maphash.MakeSeed(), rand.Uint64()|1
		d.slots = make([]dictSlot, 1024)
	}
	clear(d.slots)
	d.dict, d.ends, d.hashes = d.dict[:0], append(d.ends[:0], 0), d.hashes[:0]
}

// len is the number of distinct values.
func (d *strDict) len() int { return len(d.ends) - 1 }

// id returns val's id, adding val when it is new.
func (d *strDict) id(val []byte) int32 {
	h := d.hash(val)
	tag := uint32(h >> 32)
	mask := uint64(len(d.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &d.slots[i]
		if s.id == 0 {
			id := int32(d.len())
			d.dict = append(d.dict, val...)
			d.ends = append(d.ends, int32(len(d.dict)))
			d.hashes = append(d.hashes, h)
			*s = dictSlot{tag: tag, id: id + 1}
			if 2*d.len() > len(d.slots) {
				d.grow()
			}
			return id
		}
		if s.tag == tag {
			id := s.id - 1
			if string(d.dict[d.ends[id]:d.ends[id+1]]) == string(val) {
				return id
			}
		}
	}
}

// grow doubles the table and places every id again.
func (d *strDict) grow() {
	n := 1 << bits.Len(uint(2*len(d.slots)-1))
	d.slots = make([]dictSlot, n)
	mask := uint64(n - 1)
	for id, h := range d.hashes {
		i := h & mask
		for d.slots[i].id != 0 {
			i = (i + 1) & mask
		}
		d.slots[i] = dictSlot{tag: uint32(h >> 32), id: int32(id) + 1}
	}
}

// hash hashes val: the values of a string column are mostly short (tool
// and property names), and a value of at most 16 bytes is two overlapping
// words folded by one 128-bit multiply, far cheaper than a call to
// maphash; a longer one goes to maphash. The key is random, so that no
// census can be made to pile its values into one run of slots.
func (d *strDict) hash(val []byte) uint64 {
	n := len(val)
	var a, b uint64
	switch {
	case n > 16:
		return maphash.Bytes(d.seed, val)
	case n >= 8:
		a, b = binary.LittleEndian.Uint64(val), binary.LittleEndian.Uint64(val[n-8:])
	case n >= 4:
		a, b = uint64(binary.LittleEndian.Uint32(val)), uint64(binary.LittleEndian.Uint32(val[n-4:]))
	case n > 0:
		a, b = uint64(val[0])<<16|uint64(val[n/2])<<8|uint64(val[n-1]), 0
	}
	hi, lo := bits.Mul64(a^d.key, b^uint64(n)^0x9e3779b97f4a7c15)
	return hi ^ lo
}
