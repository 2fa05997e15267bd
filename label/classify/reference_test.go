package classify

// This file is the slow, obviously-correct matcher the fuzz target compares
// the fast one with. It builds the lowered haystack as cells and tries every
// form at every position, transcribing the Python patterns literally:
//
//	(?<![a-z0-9_])form(?![a-z0-9_])   and   \b(phrase)\b

// haystackCells is lower(name + " : " + description) as cells.
func haystackCells(name, description string) []cell {
	var cells []cell
	for _, s := range []string{name, " : ", description} {
		for i := 0; i < len(s); {
			c := s[i]
			if c < 0x80 {
				f := asciiFold[c]
				cells = append(cells, cell{fold: f, word: f != 0, space: c == ' '})
				i++
				continue
			}
			r, n := decodeRune(s[i:])
			cells = lowerCells(cells, r)
			i += n
		}
	}
	return cells
}

// referenceProperty is the slow matcher: the labels of one property.
func referenceProperty(name, description string) Set {
	h := haystackCells(name, description)
	inClass := func(i int) bool { return i >= 0 && i < len(h) && h[i].fold != 0 }
	isWord := func(i int) bool { return i >= 0 && i < len(h) && h[i].word }
	// literalAt reports whether pattern text p matches h at i: a letter
	// matches a cell that folds to it; a space matches only U+0020.
	literalAt := func(p string, i int) bool {
		if i+len(p) > len(h) {
			return false
		}
		for j := 0; j < len(p); j++ {
			c := h[i+j]
			if p[j] == ' ' {
				if !c.space {
					return false
				}
			} else if c.fold != p[j] {
				return false
			}
		}
		return true
	}
	var s Set
	for _, r := range Rules() {
		for i := 0; i <= len(h) && s&r.Bit == 0; i++ {
			for _, f := range r.Forms {
				if !inClass(i-1) && literalAt(f, i) && !inClass(i+len(f)) {
					s |= r.Bit
					break
				}
			}
			for _, p := range r.Phrases {
				// \b before a letter: the previous character is not \w;
				// after a letter: the next one is not \w.
				if !isWord(i-1) && literalAt(p, i) && !isWord(i+len(p)) {
					s |= r.Bit
					break
				}
			}
		}
	}
	return s
}
