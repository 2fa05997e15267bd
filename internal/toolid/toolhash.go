// Package toolid holds a tool's identity and what is built on it: the
// SHA-256 of its whole definition as served, and of its input schema alone, both over RFC 8785
// canonical JSON (census.AppendCanonical), so that key order, whitespace,
// escapes and number spelling are no change, and duplicate keys count as
// CPython's json reads them (the last wins). Hashing the whole object, not
// only name, description and input schema, catches changes to
// annotations, outputSchema or _meta that pins of the three miss.
package toolid

import (
	"crypto/sha256"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// Sums are a tool's hashes.
type Sums struct {
	// Definition hashes the whole tool object.
	Definition [32]byte
	// Schema hashes the input schema alone; HasSchema is false when the
	// tool has no object schema (Schema is then zero).
	Schema    [32]byte
	HasSchema bool
}

// Hasher hashes tools, reusing its buffer; one per goroutine.
type Hasher struct{ buf []byte }

// Tool hashes t, a tool as the census decoder gives it.
func (h *Hasher) Tool(t *census.Tool) Sums {
	var s Sums
	s.Definition = h.sum(t.Raw)
	if t.Schema == nil {
		return s
	}
	s.HasSchema = true
	if v := schemaValue(h.buf); len(v) > 0 && v[0] == '{' {
		s.Schema = sha256.Sum256(v)
	} else {
		s.Schema = h.sum(t.Schema)
	}
	return s
}

// Definition hashes the raw bytes of one tool object as Tool hashes a
// decoded tool's, for callers holding bytes no decoder has validated (the
// proxy); it fails when raw is not JSON.
func (h *Hasher) Definition(raw []byte) ([32]byte, error) {
	var err error
	if h.buf, err = census.AppendCanonical(h.buf[:0], raw); err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(h.buf), nil
}

// sum canonicalises raw into the buffer and hashes it.
func (h *Hasher) sum(raw []byte) [32]byte {
	var err error
	// The decoder validated Raw and Schema: AppendCanonical cannot fail
	// on them.
	if h.buf, err = census.AppendCanonical(h.buf[:0], raw); err != nil {
		panic("toolhash: a decoded tool did not canonicalise: " + err.Error())
	}
	return sha256.Sum256(h.buf)
}
