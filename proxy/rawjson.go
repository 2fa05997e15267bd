package proxy

import (
	"encoding/json"
	"errors"
)

// The tools/list rewrite works on the raw bytes of the result: decoding
// into maps and encoding again would reorder keys, drop duplicate members
// and change number literals, and the client must see exactly what the
// server sent apart from the one member added to each tool's _meta. The
// SDK has validated the message before it reaches us, so these scanners
// only find boundaries; on anything unexpected they report errBadJSON and
// the result passes through unchanged.

var errBadJSON = errors.New("malformed JSON")

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errBadJSON
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errBadJSON
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errBadJSON
	}
	// A number or literal: up to the next delimiter.
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, nil
		}
		j++
	}
	return j, nil
}

// member is one name/value pair of an object: the raw key (quotes
// included) and the value's span.
type member struct {
	key        []byte
	kstart     int // where the key starts
	start, end int
}

// members calls fn for each member of the object starting at b[i] and
// returns the index of its closing brace.
func members(b []byte, i int, fn func(m member)) (int, error) {
	i, done, err := firstItem(b, i, '{', '}')
	if done || err != nil {
		return i, err
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errBadJSON
		}
		kend, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i:kend]
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, errBadJSON
		}
		vstart := skipWS(b, i+1)
		vend, err := skipValue(b, vstart)
		if err != nil {
			return 0, err
		}
		fn(member{key: key, kstart: kend - len(key), start: vstart, end: vend})
		if i, done, err = nextItem(b, vend, '}'); done || err != nil {
			return i, err
		}
	}
}

// elements calls fn for the span of each element of the array starting at
// b[i] and returns the index of its closing bracket.
func elements(b []byte, i int, fn func(start, end int) error) (int, error) {
	i, done, err := firstItem(b, i, '[', ']')
	if done || err != nil {
		return i, err
	}
	for {
		end, err := skipValue(b, i)
		if err != nil {
			return 0, err
		}
		if err := fn(i, end); err != nil {
			return 0, err
		}
		if i, done, err = nextItem(b, end, ']'); done || err != nil {
			return i, err
		}
	}
}

// firstItem reads the opening bracket at b[i]: it returns where the first
// member or element starts, or, for an empty object or array, the index of
// the closing bracket and done.
func firstItem(b []byte, i int, opening, closing byte) (int, bool, error) {
	if i >= len(b) || b[i] != opening {
		return 0, false, errBadJSON
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == closing {
		return i, true, nil
	}
	return i, false, nil
}

// nextItem reads what follows a member or element ending at b[end]: a comma
// (it returns where the next one starts) or the closing bracket (it returns
// its index and done).
func nextItem(b []byte, end int, closing byte) (i int, done bool, err error) {
	i = skipWS(b, end)
	if i >= len(b) {
		return 0, false, errBadJSON
	}
	switch b[i] {
	case ',':
		return skipWS(b, i+1), false, nil
	case closing:
		return i, true, nil
	}
	return 0, false, errBadJSON
}

// keyIs reports whether the raw key (quotes included) decodes to name;
// escapes such as "\u005fmeta" are honoured, as every JSON reader does.
func keyIs(raw []byte, name string) bool {
	if len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name {
		return true
	}
	for _, c := range raw {
		if c == '\\' {
			var s string
			return json.Unmarshal(raw, &s) == nil && s == name
		}
	}
	return false
}

// lastMember returns the span of the last member named name (the one every
// JSON reader keeps) of the object at b[i], and the index of its closing
// brace.
func lastMember(b []byte, i int, name string) (start, end, closing int, err error) {
	start, end = -1, -1
	closing, err = members(b, i, func(m member) {
		if keyIs(m.key, name) {
			start, end = m.start, m.end
		}
	})
	return start, end, closing, err
}
