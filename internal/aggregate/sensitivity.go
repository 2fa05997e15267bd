package aggregate

import (
	"github.com/atlas-reproduce/atlas-reproduce/classify"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/sensitivity"
)

// Sensitivity counts, per variant and class, the tools the non-normative
// sensitivity variants add. It is kept apart from Counters, so that no
// normative count can depend on it. Each worker owns one; they are merged
// once at the end.
type Sensitivity struct {
	report.SensitivityCounts
}

// Add counts one tool's additions.
func (s *Sensitivity) Add(a *sensitivity.Added) {
	if !a.Any() {
		return
	}
	for i := range 5 {
		bit := classify.Set(1) << i
		for v, set := range [3]classify.Set{a.CamelCase, a.WordSplit, a.Deep} {
			if set&bit != 0 {
				s.Tools[v][i]++
			}
		}
		for v, set := range [2]classify.Set{a.CamelCaseRequired, a.WordSplitRequired} {
			if set&bit != 0 {
				s.Required[v][i]++
			}
		}
	}
}

// Merge adds o into s.
func (s *Sensitivity) Merge(o *Sensitivity) {
	for v := range s.Tools {
		for i := range s.Tools[v] {
			s.Tools[v][i] += o.Tools[v][i]
		}
	}
	for v := range s.Required {
		for i := range s.Required[v] {
			s.Required[v][i] += o.Required[v][i]
		}
	}
}
