package aggregate

import (
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

// Sensitivity counts, per variant and class, the tools the non-normative
// sensitivity variants add. It is kept apart from Counters, so that no
// normative count can depend on it. Each worker owns one; they are merged
// once at the end.
type Sensitivity struct {
	// Tools counts, per class bit index (classify bit i is class 1<<i),
	// the tools camel_case, word_split and deep add; Required those of
	// them where a required property carries the class, for camel_case
	// and word_split.
	Tools    [3][5]int64
	Required [2][5]int64
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
