package classify

// The fast matcher. Every bounded form consists only of boundary-class
// characters, so (?<![a-z0-9_])form(?![a-z0-9_]) matches exactly when some
// maximal run of boundary-class characters, folded to the pattern characters
// they match, equals the form. Likewise \b(amount in|monetary|currency
// code)\b matches exactly when a maximal run of \w characters that are all in
// the class equals "monetary", or equals "amount" ("currency") and is followed
// by one U+0020 and then such a run equal to "in" ("code"). So one pass over
// the haystack, collecting runs and looking each up, decides every label.
// This file's matcher takes any text, byte by byte; ascii.go finds the runs
// of ASCII pieces 64 bytes at a time and leaves the rest to it.

// maxForm is the length of the longest form ("destination_path"); a longer
// run can match nothing.
const maxForm = 16

type formEntry struct {
	form string
	bits Set
	// phrase marks the words of \b(amount in|monetary|currency code)\b:
	// they are looked up with the forms, so a word's end costs one lookup.
	phrase uint8
}

// Phrase words.
const (
	phAmount uint8 = iota + 1
	phCurrency
	phMonetary
	phIn
	phCode
)

// formIndex holds the forms by length and first letter: a run is compared
// with the zero to three forms that share both.
var formIndex [maxForm + 1][26][]formEntry

func init() {
	for _, r := range Rules {
		for _, f := range r.Forms {
			if len(f) > maxForm || f[0] < 'a' || f[0] > 'z' {
				panic("classify: form outside the matcher's assumptions: " + f)
			}
			bucket := &formIndex[len(f)][f[0]-'a']
			found := false
			for i := range *bucket {
				if (*bucket)[i].form == f {
					(*bucket)[i].bits |= r.Bit
					found = true
				}
			}
			if !found {
				*bucket = append(*bucket, formEntry{form: f, bits: r.Bit})
			}
		}
	}
	for w, ph := range map[string]uint8{"amount": phAmount, "currency": phCurrency, "monetary": phMonetary, "in": phIn, "code": phCode} {
		bucket := &formIndex[len(w)][w[0]-'a']
		found := false
		for i := range *bucket {
			if (*bucket)[i].form == w {
				(*bucket)[i].phrase = ph
				found = true
			}
		}
		if !found {
			*bucket = append(*bucket, formEntry{form: w, phrase: ph})
		}
	}
	buildASCIIIndex()
}

// Phrase states: a pure word run "amount" or "currency" has just been
// ended by one U+0020 (spaceAmount, spaceCurrency).
const (
	phraseNone uint8 = iota
	spaceAmount
	spaceCurrency
)

// matcher carries the state of one pass across the three pieces of the
// haystack (name, " : ", description) without concatenating them.
type matcher struct {
	run    [maxForm]byte
	runLen int  // length of the current boundary-class run (may exceed maxForm)
	inWord bool // inside a run of \w characters
	pure   bool // that \w run holds only boundary-class characters
	phrase uint8
	set    Set
}

// lookup returns the index entry equal to the current class run, or nil.
func (m *matcher) lookup() *formEntry {
	n := m.runLen
	if n == 0 || n > maxForm || m.run[0]-'a' >= 26 {
		return nil
	}
	bucket := formIndex[n][m.run[0]-'a']
	for i := range bucket {
		if bucket[i].form == string(m.run[:n]) {
			return &bucket[i]
		}
	}
	return nil
}

// endClassRun ends a class run inside a \w run (a word character outside
// the class follows): the run can be a form but not a phrase word.
func (m *matcher) endClassRun() {
	if e := m.lookup(); e != nil {
		m.set |= e.bits
	}
	m.runLen = 0
}

// nonWord handles a character outside \w (space reports U+0020). It is
// small enough to inline: the word-ending work sits in endWord.
func (m *matcher) nonWord(space bool) {
	if m.inWord {
		m.endWord(space)
		return
	}
	// A second non-word character in a row breaks any phrase.
	m.phrase = phraseNone
}

// endWord ends a \w run and the class run that ends with it. A pure run
// (all of it in the class) is a whole word, so it may be a phrase word.
func (m *matcher) endWord(space bool) {
	prev := m.phrase
	m.phrase = phraseNone
	m.inWord = false
	e := m.lookup()
	m.runLen = 0
	if e == nil {
		return
	}
	m.set |= e.bits
	if e.phrase == 0 || !m.pure {
		return
	}
	switch e.phrase {
	case phMonetary:
		m.set |= MoneyAmount
	case phIn:
		if prev == spaceAmount {
			m.set |= MoneyAmount
		}
	case phCode:
		if prev == spaceCurrency {
			m.set |= MoneyAmount
		}
	case phAmount:
		if space {
			m.phrase = spaceAmount
		}
	case phCurrency:
		if space {
			m.phrase = spaceCurrency
		}
	}
}

// cell feeds one non-ASCII cell.
func (m *matcher) cell(c cell) {
	switch {
	case c.fold != 0:
		if !m.inWord {
			m.inWord, m.pure = true, true
		}
		if m.runLen < maxForm {
			m.run[m.runLen] = c.fold
		}
		m.runLen++
	case c.word:
		// A word character outside the class ends the class run but not
		// the \w run, which is no longer pure.
		m.endClassRun()
		m.inWord = true
		m.pure = false
	default:
		m.nonWord(c.space)
	}
}

func feed[T ~string | ~[]byte](m *matcher, s T) {
	var buf [2]cell
	for i := 0; i < len(s); {
		c := s[i]
		f := asciiFold[c]
		switch {
		case f == 0:
			m.nonWord(c == ' ')
			i++
		case f != 0xFF:
			// An ASCII class run, consumed in bulk: this loop is where
			// nearly all the bytes of real schemas go. Only a run short
			// enough to be a form is folded into the buffer.
			if !m.inWord {
				m.inWord, m.pure = true, true
			}
			j := i + 1
			for j < len(s) && asciiFold[s[j]]-1 < 0xFE {
				j++
			}
			n := m.runLen
			if n+j-i <= maxForm {
				for k := i; k < j; k++ {
					m.run[n] = asciiFold[s[k]]
					n++
				}
			} else {
				n += j - i
			}
			m.runLen = n
			i = j
		default:
			r, size := decodeRune(s[i:])
			i += size
			for _, c := range lowerCells(buf[:0], r) {
				m.cell(c)
			}
		}
	}
}

func (m *matcher) finish() Set {
	m.nonWord(false)
	return m.set
}

// property or-s the labels of the two pieces: the joint " : " between them
// ends every run and breaks every phrase, so no match spans it.
func property[T ~string | ~[]byte](name, description T) Set {
	return piece(name) | piece(description)
}

// Property returns the labels (classes and buckets) of one parameter
// property: those whose Python pattern matches str.lower(name + " : " +
// description) under re.IGNORECASE. Strings are UTF-8; invalid bytes, and
// lone surrogates carried as WTF-8, count as non-word characters, as a
// surrogate does in Python.
func Property(name, description string) Set { return property(name, description) }

// PropertyBytes is Property for byte slices, without allocating.
func PropertyBytes(name, description []byte) Set { return property(name, description) }
