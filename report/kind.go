package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
)

// Report kinds: what a run's inputs claim to be, which decides what the
// report can say about them.
const (
	// KindReproduction is a run whose inputs claim to be the pinned
	// snapshot (the spec's hashes, or no hashes checked at all): only it
	// earns the REPRODUCED / NOT REPRODUCED verdict.
	KindReproduction = "reproduction"
	// KindRelease is a census release that is not the snapshot: a crawl
	// with its release.json, or data verified against its own sums. Its
	// figures stand on their own, beside a previous run when given and
	// beside the published snapshot in percentage points; no verdict.
	KindRelease = "release"
	// KindSynthetic is a synthetic census with its ground truth
	// (truth.json): its verdict says whether the counts equal the truth.
	KindSynthetic = "synthetic"
)

// Verdicts of a synthetic census.
const (
	VerdictMatchesTruth = "MATCHES TRUTH"
	VerdictDiffersTruth = "DIFFERS FROM TRUTH"
)

// Truth is a census's ground truth, as synth writes truth.json (and
// bench/reference.py census prints it).
type Truth struct {
	Tools   int64                 `json:"tools"`
	Servers int64                 `json:"servers"`
	Classes map[string]TruthClass `json:"classes"`
	Buckets map[string]int64      `json:"buckets"`
	Shapes  map[string]int64      `json:"shapes"`
}

// TruthClass is one class of a Truth: tools with a labelled property and
// those where such a property is also required.
type TruthClass struct {
	Tools    int64 `json:"tools"`
	Required int64 `json:"required"`
}

// ReadTruth reads a truth.json; name names it in errors.
func ReadTruth(rd io.Reader, name string) (*Truth, error) {
	var t Truth
	if err := json.NewDecoder(rd).Decode(&t); err != nil {
		return nil, fmt.Errorf("%s: not a census truth: %w", name, err)
	}
	if t.Classes == nil || t.Buckets == nil || t.Shapes == nil {
		return nil, fmt.Errorf("%s: not a census truth (classes, buckets or shapes missing)", name)
	}
	return &t, nil
}

// TruthCheck is a synthetic census's counts held to its ground truth.
type TruthCheck struct {
	// File names the truth file (its base name).
	File string `json:"file"`
	// Matches is true when every count equals the truth's.
	Matches bool `json:"matches"`
	// Differences lists the counts that differ; empty when Matches.
	Differences []string `json:"differences"`
	// Truth is the ground truth itself.
	Truth *Truth `json:"truth"`
}

// CheckTruth holds r's counts to t: tools, servers, every record shape,
// every class with its required count, every bucket.
func (r *Report) CheckTruth(t *Truth, file string) *TruthCheck {
	c := &TruthCheck{File: file, Truth: t, Differences: []string{}}
	diff := func(what string, ours, truth int64) {
		if ours != truth {
			c.Differences = append(c.Differences, fmt.Sprintf("%s %s, truth %s", what, group(ours), group(truth)))
		}
	}
	diff("tools", r.Tools, t.Tools)
	diff("servers", r.Servers, t.Servers)
	for _, k := range slices.Sorted(maps.Keys(union(r.Shapes, t.Shapes))) {
		diff("shape "+k, r.Shapes[k], t.Shapes[k])
	}
	for _, id := range r.ClassOrder {
		diff(id+" tools", r.Classes[id].Tools, t.Classes[id].Tools)
		diff(id+" required", r.Classes[id].Required, t.Classes[id].Required)
	}
	for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
		diff(id, r.Buckets[id].Tools, t.Buckets[id])
	}
	c.Matches = len(c.Differences) == 0
	return c
}

func union(a, b map[string]int64) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// DepositCheck is a run over a deposit made by publish held to the
// deposit's own published table (its report.json and classes.parquet).
type DepositCheck struct {
	// Verdict is VerdictReproduced or VerdictNotReproduced; empty for a
	// deposit that publishes no counts.
	Verdict string `json:"verdict"`
	// Differences name each count that differs, "what ours, published
	// theirs".
	Differences []string `json:"differences"`
}

// Baseline is a release set beside a previous run (`run --baseline DIR`):
// class by class and, from both runs' tools.parquet, tool by tool, as
// `diff` compares them.
type Baseline struct {
	// Dir is the previous run's folder as given.
	Dir string `json:"dir"`
	// Diff is the comparison, old = the baseline, new = this run.
	Diff *DiffResult `json:"diff"`
}

// EffectiveKind is r's kind; a report.json written before kinds existed is a
// reproduction.
func (r *Report) EffectiveKind() string {
	if r.Kind == "" {
		return KindReproduction
	}
	return r.Kind
}

// Earned reports whether the run earned the verdict a CI job asks for
// (`reproduce`, `run --require-reproduced`): REPRODUCED for the snapshot, its
// counts equal to its truth for a synthetic census. A release has no verdict
// to earn. The error says why not.
func (r *Report) Earned() error {
	switch r.EffectiveKind() {
	case KindRelease:
		if d := r.Deposit; d != nil {
			switch d.Verdict {
			case VerdictReproduced:
				return nil
			case "":
				return fmt.Errorf("a release with no published counts: nothing to reproduce")
			}
			return fmt.Errorf("verdict %s against the deposit's published table: %s", d.Verdict, joinDiffs(d.Differences))
		}
		return fmt.Errorf("a release report has no verdict: its inputs (verified against %s) are not the pinned %s snapshot", orDash(r.Manifest), r.Snapshot)
	case KindSynthetic:
		if r.Verdict == VerdictMatchesTruth {
			return nil
		}
	default:
		if r.Verdict == VerdictReproduced {
			return nil
		}
	}
	msg := "verdict " + r.Verdict
	if len(r.Differences) > 0 {
		msg += ": " + joinDiffs(r.Differences)
	}
	return fmt.Errorf("%s", msg)
}

func orDash(s string) string {
	if s == "" {
		return "no manifest"
	}
	return s
}

func joinDiffs(d []string) string {
	const most = 6
	s := ""
	for i, x := range d {
		if i == most {
			return s + fmt.Sprintf("; and %d more", len(d)-most)
		}
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}
