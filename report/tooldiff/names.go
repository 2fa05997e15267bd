package tooldiff

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"

	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
)

// FirstNames reads a run's tools.parquet at path and returns, for each of
// the definition hash prefixes (hex, as report.SharedDefinition has them),
// the name of the first tool in file order whose definition_sha256 starts
// with it, for a report to show beside the hash. A prefix no named tool has
// is left out. It reads the names and the definition hash alone, and stops
// once every prefix is named: the most shared definitions come early in a
// census, and reading the rest of the file cost a run about a tenth of its CPU.
func FirstNames(ctx context.Context, path string, prefixes []string) (map[string]string, error) {
	out := map[string]string{}
	if len(prefixes) == 0 {
		return out, nil
	}
	want := make([]hexPrefix, len(prefixes))
	for i, p := range prefixes {
		want[i] = parseHexPrefix(p)
	}
	named := 0
	err := tables.ReadTools(ctx, path, tables.ReadOptions{NoLabels: true}, func(r *tables.ToolRow) error {
		if !r.HasName {
			return nil
		}
		for i := range want {
			if w := &want[i]; !w.named && w.of(&r.Definition) {
				w.named = true
				out[prefixes[i]] = string(r.Name)
				named++
			}
		}
		if named == len(want) {
			return errAllNamed
		}
		return nil
	})
	if errors.Is(err, errAllNamed) {
		err = nil
	}
	return out, err
}

// hexPrefix is a prefix of a hash's lower-case hex digits, as bytes: the
// whole bytes, and the high nibble of the next when the prefix has an odd
// length. Comparing a row's hash with it costs a few instructions where
// hex-encoding the hash first cost a tenth of the reading.
type hexPrefix struct {
	whole        []byte
	nibble       byte
	odd, invalid bool
	named        bool // a first name was found
}

// parseHexPrefix reads p; a p that no lower-case hex encoding starts with
// (another character, or longer than a hash) is marked invalid.
func parseHexPrefix(p string) hexPrefix {
	var h hexPrefix
	if len(p) > 2*len(tables.Hash{}) {
		h.invalid = true
		return h
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			h.invalid = true
			return h
		}
	}
	h.whole, _ = hex.DecodeString(p[:len(p)&^1])
	if len(p)%2 == 1 {
		h.odd = true
		b, _ := hex.DecodeString(p[len(p)-1:] + "0")
		h.nibble = b[0]
	}
	return h
}

// of reports whether def's hex digits start with h.
func (h *hexPrefix) of(def *tables.Hash) bool {
	if h.invalid || !bytes.HasPrefix(def[:], h.whole) {
		return false
	}
	return !h.odd || def[len(h.whole)]&0xf0 == h.nibble
}

// errAllNamed stops FirstNames' reading once every prefix has its name.
var errAllNamed = errors.New("every prefix named")
