package classify

// baselineProperty is the exact matcher of match.go run over the whole
// haystack, joint included, with no ASCII fast path: the benchmarks compare
// the fast path with it in one run, and the tests require equal labels.
func baselineProperty(name, description string) Set {
	m := matcher{t: classWords}
	feed(&m, name)
	m.nonWord(true)
	m.nonWord(false) // ':'
	m.nonWord(true)
	feed(&m, description)
	return m.finish()
}
