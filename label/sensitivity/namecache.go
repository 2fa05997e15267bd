package sensitivity

import (
	"hash/maphash"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// Property names repeat across tools far more than tool texts do (query,
// limit, max_results, pageToken ...), and every tool the run's memo has
// not seen pays the two rewrites and two classifications of each of its
// names. nameCache remembers what the rewrites of a name give, in a fixed
// number of slots, each holding one name: a name that hashes to a taken
// slot replaces its holder. Memory is the slots alone, whatever the census;
// a hit compares the whole name, so the cache changes no result, only the
// time to reach it.
type nameCache struct {
	seed  maphash.Seed
	slots []nameSlot // a power of two of them, allocated on first use
}

const (
	// nameCacheSlots is the number of slots of an Analyzer's cache: some
	// 190 kB per worker.
	nameCacheSlots = 1 << 12
	// nameCacheMax is the longest name the cache holds; a longer one is
	// rewritten every time (the names of real schemas are far shorter).
	nameCacheMax = 40
)

// nameSlot is one cached name and its two labels. n is the name's length;
// 0 marks an empty slot, since the empty name needs no rewrite and is
// never looked up.
type nameSlot struct {
	n           uint8
	camel, word classify.Set
	key         [nameCacheMax]byte
}

// rewriteLabels returns the labels of name's camel_case and word_split
// rewrites classified alone (0 for a rewrite that leaves the name
// unchanged, which adds nothing), buf being scratch memory. It is the
// general path the cache stands in front of.
func rewriteLabels(buf *[]byte, name []byte) (camel, word classify.Set) {
	*buf = CamelCase((*buf)[:0], name)
	if len(*buf) != len(name) { // a boundary was found
		camel = classify.PropertyBytes(*buf, nil)
	}
	*buf = WordSplit((*buf)[:0], name)
	if string(*buf) != string(name) {
		word = classify.PropertyBytes(*buf, nil)
	}
	return camel, word
}

// rewrites is rewriteLabels through the cache, whose slots it allocates
// (n of them, a power of two) on first use.
func (c *nameCache) rewrites(buf *[]byte, name []byte, n int) (camel, word classify.Set) {
	if len(name) == 0 || len(name) > nameCacheMax {
		return rewriteLabels(buf, name)
	}
	if c.slots == nil {
		c.seed = maphash.MakeSeed()
		c.slots = make([]nameSlot, n)
	}
	s := &c.slots[maphash.Bytes(c.seed, name)&uint64(len(c.slots)-1)]
	if int(s.n) == len(name) && string(s.key[:len(name)]) == string(name) {
		return s.camel, s.word
	}
	camel, word = rewriteLabels(buf, name)
	s.n = uint8(len(name))
	copy(s.key[:], name)
	s.camel, s.word = camel, word
	return camel, word
}
