package tooldiff

import (
	"context"
	"encoding/hex"
	"errors"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
	"strings"
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
	var hexDef [64]byte
	err := tables.ReadTools(ctx, path, tables.ReadOptions{NoLabels: true}, func(r *tables.ToolRow) error {
		if !r.HasName {
			return nil
		}
		hex.Encode(hexDef[:], r.Definition[:])
		for _, p := range prefixes {
			if _, done := out[p]; !done && strings.HasPrefix(string(hexDef[:]), p) {
				out[p] = string(r.Name)
			}
		}
		if len(out) == len(prefixes) {
			return errAllNamed
		}
		return nil
	})
	if errors.Is(err, errAllNamed) {
		err = nil
	}
	return out, err
}

// errAllNamed stops FirstNames' reading once every prefix has its name.
var errAllNamed = errors.New("every prefix named")
