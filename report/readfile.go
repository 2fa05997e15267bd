package report

import (
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
)

// ReadFile reads a report.json from disk. Its folder is checked first: a run
// killed between renaming its outputs leaves a report.json of one run beside
// tables of another, and a reader must not take that for a run's result.
func ReadFile(path string) (*Report, error) {
	f, err := outset.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}
