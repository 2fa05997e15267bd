package classify

import "math/bits"

// A run table is the one thing the classes and the surface signals differ in
// for the matching kernel: the words a maximal run of [a-z0-9_] characters is
// looked up in, and what each word is worth (label bits for the class forms,
// list bits for the surface words). The block scan of ascii.go and the
// byte-by-byte scanner of match.go both find the runs and ask the table.

// maxRun is the length of the longest word a table holds ("destination_path"
// among the forms); a longer run matches nothing, so the scanners keep at
// most maxRun bytes of a run.
const maxRun = 16

// runTable is a set of words, each with a value, indexed for lookup by the
// folded key of a run.
type runTable struct {
	// filter has bit (last key byte & 63) of [length][first key byte & 31]
	// set when some word may have that length, first and last byte: a
	// cheap test that most runs fail. It tolerates false positives (digits
	// share low bits with letters); the key compare is exact.
	filter [maxRun + 1][32]uint64
	// entries are found by a perfect hash of their keys: slot maps the hash
	// to an index into entries, whose entry 0 has the empty key, which no
	// run has.
	entries []runEntry
	slot    []uint8
	mul     uint64
	shift   uint
}

// runEntry is a word as its key, two words of bytes or-ed with 0x20 (see
// foldKey), zero past its end; value is what the word is worth, and phrase
// marks a word of the money phrases (classes only).
type runEntry struct {
	lo, hi uint64
	value  uint64
	phrase uint8
}

// runWord is a word to index, with its value and phrase mark.
type runWord struct {
	word   string
	value  uint64
	phrase uint8
}

// newRunTable indexes words; a word listed twice gets the union of its
// values. It panics on a word outside [a-z0-9_] or longer than maxRun: the
// kernel's assumptions are the tables' invariants.
func newRunTable(words []runWord) *runTable {
	t := &runTable{entries: []runEntry{{}}}
	index := map[[2]uint64]int{}
	for _, w := range words {
		n := len(w.word)
		if n == 0 || n > maxRun {
			panic("classify: word length outside the matcher's assumptions: " + w.word)
		}
		var key [16]byte
		for i := 0; i < n; i++ {
			c := w.word[i]
			if !isLowerOrDigit(c) && c != '_' {
				panic("classify: word outside [a-z0-9_]: " + w.word)
			}
			key[i] = foldKey(c)
		}
		lo, hi := le64(key[:8]), le64(key[8:])
		if i, ok := index[[2]uint64{lo, hi}]; ok {
			t.entries[i].value |= w.value
			t.entries[i].phrase |= w.phrase
			continue
		}
		index[[2]uint64{lo, hi}] = len(t.entries)
		t.entries = append(t.entries, runEntry{lo: lo, hi: hi, value: w.value, phrase: w.phrase})
		t.filter[n][key[0]&31] |= 1 << (key[n-1] & 63)
	}
	if len(t.entries) > 255 {
		panic("classify: too many words for a slot table of bytes")
	}
	t.buildSlots()
	return t
}

// buildSlots searches for a multiplier under which no two entries share a
// slot, growing the slot table until one is found quickly: a table about
// eight times the square of the entries has no collision with a fair chance
// per multiplier.
func (t *runTable) buildSlots() {
	n := len(t.entries)
	for size := bits.Len(uint(n * n / 8)); size < 20; size++ {
		t.slot, t.shift = make([]uint8, 1<<size), uint(64-size)
		m := uint64(0x2545F4914F6CDD1D)
	search:
		for try := 0; try < 1<<10; try, m = try+1, m+0x9E3779B97F4A7C16 {
			t.mul = m | 1
			clear(t.slot)
			for i, e := range t.entries[1:] {
				h := t.hash(e.lo, e.hi)
				if t.slot[h] != 0 {
					continue search
				}
				t.slot[h] = uint8(i + 1)
			}
			return
		}
	}
	panic("classify: no perfect hash for the run table")
}

func (t *runTable) hash(lo, hi uint64) uint64 {
	return ((lo ^ hi*0x9E3779B97F4A7C15) * t.mul) >> t.shift
}

// lookup returns the entry whose key is lo, hi, or nil.
func (t *runTable) lookup(lo, hi uint64) *runEntry {
	e := &t.entries[t.slot[t.hash(lo, hi)]]
	if e.lo != lo || e.hi != hi {
		return nil
	}
	return e
}

// mayHold is the filter test for a run of length n with key bytes first and
// last.
func (t *runTable) mayHold(n int, first, last byte) bool {
	return t.filter[n][first&31]&(1<<(last&63)) != 0
}
