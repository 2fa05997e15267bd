package census

import (
	"hash/maphash"
)

// linearMax is the most entries searched one by one before a byteMap takes
// over. Real schemas have a handful of properties, where a scan beats
// hashing; a hostile line with a million keys must not cost a million
// squared comparisons.
const linearMax = 16

// byteMap is an open-addressing index from byte strings to positions in one
// of the decoder's arenas, which hold the keys themselves: a slot is only a
// hash and a position (8 bytes), which keeps a hostile line of a million
// tiny keys from costing much more than the arena already does. A Decoder
// reuses it from line to line, so that it allocates only while growing to
// the largest size a line has needed. A Go map keyed by string(key) would
// copy every key.
type byteMap struct {
	seed  maphash.Seed
	slots []bmSlot
	spare []bmSlot // the table before the last growth, reused by the next
	n     int
}

type bmSlot struct {
	hash uint32
	val  int32 // position + 1; 0 marks an empty slot
}

// keySource gives the key stored at a position of an arena.
type keySource interface {
	keyAt(i int) []byte
	len() int
}

// The arenas a byteMap indexes.
type (
	propNames []Property
	defKeys   []defEntry
	reqNames  [][]byte
)

func (s propNames) keyAt(i int) []byte { return s[i].Name }
func (s defKeys) keyAt(i int) []byte   { return s[i].key }
func (s reqNames) keyAt(i int) []byte  { return s[i] }
func (s propNames) len() int           { return len(s) }
func (s defKeys) len() int             { return len(s) }
func (s reqNames) len() int            { return len(s) }

// reset empties the map and sizes it for about hint entries. Only the slots
// in use are cleared, so a map that once grew large stays cheap to reset.
func (m *byteMap) reset(hint int) {
	size := 64
	for size < 2*hint {
		size <<= 1
	}
	if m.seed == (maphash.Seed{}) {
		m.seed = maphash.MakeSeed()
	}
	if cap(m.slots) < size {
		m.slots = make([]bmSlot, size)
	} else {
		m.slots = m.slots[:size]
		clear(m.slots)
	}
	m.n = 0
}

// bmGet returns the position of key, looking keys up in src.
func bmGet[S keySource](m *byteMap, key []byte, src S) (int, bool) {
	h := uint32(maphash.Bytes(m.seed, key))
	mask := uint32(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := m.slots[i]
		if s.val == 0 {
			return 0, false
		}
		if s.hash == h && string(src.keyAt(int(s.val-1))) == string(key) {
			return int(s.val - 1), true
		}
	}
}

// indexAppended keeps m up to date after an entry was appended to src, an
// arena whose entries from start on are the distinct keys of one JSON
// object: a run short enough to scan is left unindexed (hashed false); the
// entry that makes it too long indexes the whole run. It returns whether
// the run is indexed now.
func indexAppended[S keySource](m *byteMap, src S, start int, hashed bool) bool {
	n := src.len()
	if hashed {
		m.put(src.keyAt(n-1), n-1)
		return true
	}
	if n-start <= linearMax {
		return false
	}
	m.reset(2 * linearMax)
	for j := start; j < n; j++ {
		m.put(src.keyAt(j), j)
	}
	return true
}

// put records that key, which the caller knows is absent, is at pos.
func (m *byteMap) put(key []byte, pos int) {
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	m.insert(uint32(maphash.Bytes(m.seed, key)), int32(pos+1))
	m.n++
}

func (m *byteMap) insert(hash uint32, val int32) {
	mask := uint32(len(m.slots) - 1)
	for i := hash & mask; ; i = (i + 1) & mask {
		if m.slots[i].val == 0 {
			m.slots[i] = bmSlot{hash: hash, val: val}
			return
		}
	}
}

func (m *byteMap) grow() {
	old := m.slots
	if cap(m.spare) >= 2*len(old) {
		m.slots = m.spare[:2*len(old)]
		clear(m.slots)
	} else {
		m.slots = make([]bmSlot, 2*len(old))
	}
	m.spare = old
	for _, s := range old {
		if s.val != 0 {
			m.insert(s.hash, s.val)
		}
	}
}

// trim drops tables larger than max slots.
func (m *byteMap) trim(max int) {
	if cap(m.slots) > max {
		m.slots = nil
	}
	if cap(m.spare) > max {
		m.spare = nil
	}
}

// lastWins puts e into the run of *arena from start on, the entries of one
// JSON object so far, where a key given twice keeps its first place and its
// last value (Python's dict, which the reference follows): an entry whose
// key is already in the run replaces it (key is e's own), another is appended and indexed.
// hashed says whether idx indexes the run; lastWins returns whether it does
// now.
func lastWins[E any, S interface {
	~[]E
	keySource
}](arena *S, idx *byteMap, start int, hashed bool, key []byte, e E) bool {
	s := *arena
	if hashed {
		if i, ok := bmGet(idx, key, s); ok {
			s[i] = e
			return true
		}
	} else {
		for i := start; i < len(s); i++ {
			if string(s.keyAt(i)) == string(key) {
				s[i] = e
				return false
			}
		}
	}
	s = append(s, e)
	*arena = s
	if hashed || len(s)-start > linearMax { // the common short run stays a scan, without a call
		return indexAppended(idx, s, start, hashed)
	}
	return false
}
