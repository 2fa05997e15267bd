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
// of ASCII pieces 64 bytes at a time and leaves the rest to it. Both look
// the runs up in a run table (table.go): the classes' below, or the surface
// words of surface.go, for which the scanner has two more rules (scanMode).

// Phrase words.
const (
	phAmount uint8 = iota + 1
	phCurrency
	phMonetary
	phIn
	phCode
)

// classWords are the forms, with their label bits, and the phrase words of
// \b(amount in|monetary|currency code)\b, which are looked up with the
// forms, so that a word's end costs one lookup.
var classWords = newRunTable(classRunWords())

func classRunWords() []runWord {
	var words []runWord
	for _, r := range rules {
		for _, f := range r.Forms {
			words = append(words, runWord{word: f, value: uint64(r.Bit)})
		}
	}
	for _, p := range []struct {
		word   string
		phrase uint8
	}{{"amount", phAmount}, {"currency", phCurrency}, {"monetary", phMonetary}, {"in", phIn}, {"code", phCode}} {
		words = append(words, runWord{word: p.word, phrase: p.phrase})
	}
	return words
}

// Phrase states: a pure word run "amount" or "currency" has just been
// ended by one U+0020 (spaceAmount, spaceCurrency).
const (
	phraseNone uint8 = iota
	spaceAmount
	spaceCurrency
)

// matcher carries the state of one pass across the pieces of a haystack
// (name, " : ", description) without concatenating them: the runs of t
// found so far, their values or-ed into value.
type matcher struct {
	t      *runTable
	run    [maxRun]byte
	runLen int  // length of the current boundary-class run (may exceed maxRun)
	inWord bool // inside a run of \w characters
	pure   bool // that \w run holds only boundary-class characters
	phrase uint8
	value  uint64
}

// lookup returns the table entry equal to the current class run, or nil.
func (m *matcher) lookup() *runEntry {
	n := m.runLen
	if n == 0 || n > maxRun {
		return nil
	}
	// The run holds pattern characters; foldKey makes them key bytes.
	if !m.t.mayHold(n, foldKey(m.run[0]), foldKey(m.run[n-1])) {
		return nil
	}
	lo, hi := le64(m.run[:8])|rep(0x20), le64(m.run[8:])|rep(0x20)
	if n <= 8 {
		lo, hi = lo&lengthMask(n), 0
	} else {
		hi &= lengthMask(n - 8)
	}
	return m.t.lookup(lo, hi)
}

// endClassRun ends a class run inside a \w run (a word character outside
// the class follows): the run can be a form but not a phrase word.
func (m *matcher) endClassRun() {
	if e := m.lookup(); e != nil {
		m.value |= e.value
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
	m.value |= e.value
	if e.phrase == 0 || !m.pure {
		return
	}
	switch e.phrase {
	case phMonetary:
		m.value |= uint64(MoneyAmount)
	case phIn:
		if prev == spaceAmount {
			m.value |= uint64(MoneyAmount)
		}
	case phCode:
		if prev == spaceCurrency {
			m.value |= uint64(MoneyAmount)
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

// classChar adds the pattern character f to the class run.
func (m *matcher) classChar(f byte) {
	if !m.inWord {
		m.inWord, m.pure = true, true
	}
	if m.runLen < maxRun {
		m.run[m.runLen] = f
	}
	m.runLen++
}

// cell feeds one non-ASCII cell.
func (m *matcher) cell(c cell) {
	switch {
	case c.fold != 0:
		m.classChar(c.fold)
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

// scanMode adds the surface signals' rules to the scanner; the classes scan
// with none.
type scanMode uint8

const (
	// splitName also ends a run at '_', which is dropped, and before an
	// ASCII upper-case letter that starts a word (nameBreak).
	splitName scanMode = 1 << iota
	// skipLinks skips a stretch that holds "://", from the start of the
	// run before it to the next ASCII whitespace, which goes with it.
	skipLinks
)

// feed scans s for the classes.
func feed[T ~string | ~[]byte](m *matcher, s T) { scan(m, s, 0) }

// scan feeds s to m byte by byte, with the rules of mode.
func scan[T ~string | ~[]byte](m *matcher, s T, mode scanMode) {
	var buf [2]cell
	for i := 0; i < len(s); {
		c := s[i]
		f := asciiFold[c]
		switch {
		case f == 0:
			if c == ':' && mode&skipLinks != 0 && i+2 < len(s) && s[i+1] == '/' && s[i+2] == '/' {
				i = skipLink(m, s, i+3)
				continue
			}
			m.nonWord(c == ' ')
			i++
		case f != 0xFF && mode&splitName != 0:
			if c == '_' {
				m.nonWord(false)
			} else {
				if isUpper(c) && nameBreak(s, i) {
					m.endClassRun()
				}
				m.classChar(f)
			}
			i++
		case f != 0xFF:
			// An ASCII class run, consumed in bulk: this loop is where
			// nearly all the bytes of real schemas go. Only a run short
			// enough to be a word is folded into the buffer.
			if !m.inWord {
				m.inWord, m.pure = true, true
			}
			j := i + 1
			for j < len(s) && asciiFold[s[j]]-1 < 0xFE {
				j++
			}
			n := m.runLen
			if n+j-i <= maxRun {
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

// skipLink drops the run before "://" and skips s from i, just past it, to
// the next ASCII whitespace and past that; it returns where the scan goes
// on. Continuation bytes of a multi-byte character are never ASCII
// whitespace, so skipping byte by byte is safe.
func skipLink[T ~string | ~[]byte](m *matcher, s T, i int) int {
	m.runLen, m.inWord, m.phrase = 0, false, phraseNone
	for i < len(s) && !isASCIISpace(s[i]) {
		i++
	}
	if i < len(s) {
		i++
	}
	return i
}

// end ends the last run and returns the values of all runs found.
func (m *matcher) end() uint64 {
	m.nonWord(false)
	return m.value
}

// finish ends the last run and returns the labels found.
func (m *matcher) finish() Set { return Set(m.end()) }

// piece returns the labels of one piece of the haystack (the name or the
// description), by the ASCII fast path when it can.
func piece[T ~string | ~[]byte](s T) Set {
	if v, ok := asciiRuns(classWords, s); ok {
		return Set(v)
	}
	m := matcher{t: classWords}
	feed(&m, s)
	return m.finish()
}

// asciiPiece returns the labels of one piece by the ASCII fast path, and
// false if the piece holds a non-ASCII byte.
func asciiPiece[T ~string | ~[]byte](s T) (Set, bool) {
	v, ok := asciiRuns(classWords, s)
	return Set(v), ok
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
