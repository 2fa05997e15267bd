package toolid

import "bytes"

// The input schema's canonical form is part of the tool's: rather than
// canonicalise the schema a second time, its hash is taken over its value
// in the tool's canonical text. Canonical text is compact and escapes only
// '"', '\\' and control characters, so a value is found by skipping
// strings and brackets, much faster than canonicalising.

// schemaValue returns the canonical value of the input schema that the
// census decoder chooses (inputSchema, or input_schema when that is absent
// or null) in obj, the canonical text of a tool object; nil when neither
// is there.
func schemaValue(obj []byte) []byte {
	v := member(obj, "inputSchema")
	if v == nil || string(v) == "null" {
		v = member(obj, "input_schema")
	}
	return v
}

// member returns the value of key in the canonical object obj, or nil.
func member(obj []byte, key string) []byte {
	if len(obj) < 2 || obj[0] != '{' {
		return nil
	}
	for p := 1; p < len(obj) && obj[p] == '"'; {
		ke := skipString(obj, p)
		vs := ke + 1 // past ':'
		ve := skipValue(obj, vs)
		if string(obj[p+1:ke-1]) == key {
			return obj[vs:ve]
		}
		p = ve + 1 // past ',' or '}'
	}
	return nil
}

// skipString returns the index past the string that starts at b[p].
func skipString(b []byte, p int) int {
	for i := p + 1; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		j += i
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for k := j - 1; k > p && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		i = j + 1
	}
}

// skipValue returns the index past the value that starts at b[p].
func skipValue(b []byte, p int) int {
	if p >= len(b) {
		return len(b)
	}
	switch b[p] {
	case '"':
		return skipString(b, p)
	case '{', '[':
		depth := 0
		for i := p; i < len(b); {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	i := p
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
}
