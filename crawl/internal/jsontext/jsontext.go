// Package jsontext holds the few byte-level JSON writers and scanners the
// probe, the runners and the crawl share: a string as Python's json.dumps
// writes it without HTML escapes, compact JSON re-spaced the way
// json.dumps spaces it, and the scan state that passes over strings.
package jsontext

import (
	"bytes"
	"encoding/json"
)

// AppendString appends s as a JSON string, with no HTML escapes.
func AppendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// AppendPy re-spaces compact JSON the way Python's json.dumps writes
// it (", " and ": "), outside strings.
func AppendPy(b []byte, v json.RawMessage) []byte {
	var str Strings
	for _, c := range v {
		b = append(b, c)
		if !str.Inside(c) && (c == ',' || c == ':') {
			b = append(b, ' ')
		}
	}
	return b
}

// Strings follows, byte by byte, whether a scan of valid JSON is
// inside a string, so that a scanner can pass over what strings hold.
type Strings struct{ in, escaped bool }

// Inside reports whether c, the next byte, belongs to a string (its
// quotes included).
func (s *Strings) Inside(c byte) bool {
	switch {
	case s.in:
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.in = false
		}
		return true
	case c == '"':
		s.in = true
		return true
	}
	return false
}
