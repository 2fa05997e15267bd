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
//
// A census serves one definition many times over (forks, mirrors,
// aggregators), so the Hasher keeps the sums of each tool text a
// remembering census.Decoder names (Tool.Text, see
// census.Decoder.RememberTools) and hashes such a text once; a tool
// without a TextID is hashed every time.
type Hasher struct {
	one  Batch  // the tool being hashed
	buf  []byte // Definition's canonical text
	memo census.TextResults[Sums]
}

// Tool hashes t, a tool as the census decoder gives it.
func (h *Hasher) Tool(t *census.Tool) Sums {
	if s, ok := h.memo.Get(t); ok {
		return *s
	}
	s := h.hash(t)
	h.memo.Put(t, s)
	return s
}

// hash canonicalises t and hashes the tool and its schema, as a batch of
// one: Batch.Add alone decides which texts a tool's sums are taken over.
func (h *Hasher) hash(t *census.Tool) Sums {
	h.one.Reset()
	h.one.Add(t)
	h.one.Hash()
	return h.one.Sums(0)
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
