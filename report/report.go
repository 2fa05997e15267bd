// Package report holds the published census table and the run's results,
// and writes them as report.json, report.md and Parquet.
//
// A Report holds no timing, path of the output folder or worker count: the
// outputs of a run are byte-identical for any number of workers.
package report

import (
	"encoding/json"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/atlas-reproduce/atlas-reproduce/evaluate"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// Published returns the census as the spec publishes it (snapshot
// 2026-10-12): a copy, which the caller may change.
func Published() PublishedCensus {
	p := published
	p.Classes, p.Buckets, p.Surface = maps.Clone(p.Classes), maps.Clone(p.Buckets), maps.Clone(p.Surface)
	return p
}

// PublishedCensus is the spec's published figures.
type PublishedCensus struct {
	Snapshot string
	Tools    int64
	Servers  int64
	// Classes maps a class id to its published row.
	Classes map[string]Row
	// Buckets maps a bucket id to its published tool count.
	Buckets map[string]int64
	// Surface maps a tool-surface figure id to its published figure; its
	// ID, Title and Rule are left for the run to fill.
	Surface map[string]Surface
}

// published is the spec's census; see Published.
var published = PublishedCensus{
	Snapshot: "2026-10-12",
	Tools:    229539,
	Servers:  13089,
	Classes: map[string]Row{
		"gg:url-endpoint":     {Tools: 31880, Percent: 13.889, Required: 22891},
		"gg:command-string":   {Tools: 23847, Percent: 10.389, Required: 13619},
		"gg:money-amount":     {Tools: 15229, Percent: 6.635, Required: 4449},
		"gg:credential-value": {Tools: 14753, Percent: 6.427, Required: 3418},
		"gg:filesystem-path":  {Tools: 5569, Percent: 2.426, Required: 1690},
	},
	Buckets: map[string]int64{
		"raw_content_blob": 44429,
		"account_identity": 117085,
	},
	Surface: map[string]Surface{
		"high-consequence-outbound": {Published: 995, PublishedPercent: 0.43},
		"read-retrieval":            {Published: 67423, PublishedServers: 11520},
	},
}

// Row is one line of a class table.
type Row struct {
	Tools    int64   `json:"tools"`
	Percent  float64 `json:"percent"`
	Required int64   `json:"required"`
}

// Class is our count for one class beside the published one.
type Class struct {
	Row
	Published     Row   `json:"published"`
	DeltaTools    int64 `json:"delta_tools"`
	DeltaRequired int64 `json:"delta_required"`
}

// Bucket is our count for one non-normative bucket beside the published one.
type Bucket struct {
	Tools            int64   `json:"tools"`
	Percent          float64 `json:"percent"`
	Published        int64   `json:"published"`
	PublishedPercent float64 `json:"published_percent"`
	DeltaTools       int64   `json:"delta_tools"`
	// NonNormative is always true: the buckets are not risk classes.
	NonNormative bool `json:"non_normative"`
}

// Input is one of the snapshot's files as the run read it.
type Input struct {
	Name string `json:"name"`
	// Location says where it was read: a path, or zip!member.
	Location string `json:"location"`
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
	// Expected is the manifest's hash; empty when verification was off.
	Expected string `json:"expected"`
	OK       bool   `json:"ok"`
	// Records is the number of non-blank lines.
	Records int64 `json:"records"`
}

// SkippedLine is a line passed over with --skip-bad.
type SkippedLine struct {
	File  string `json:"file"`
	Line  int64  `json:"line"`
	Error string `json:"error"`
}

// Skipped counts the lines passed over and keeps the first few.
type Skipped struct {
	Count int64         `json:"count"`
	First []SkippedLine `json:"first"`
}

// Surface is one tool-surface figure (non-normative): our count beside the
// published one, with the rule that produced it.
type Surface struct {
	ID               string  `json:"id"`
	Title            string  `json:"title"`
	Rule             string  `json:"rule"`
	Tools            int64   `json:"tools"`
	Percent          float64 `json:"percent"`
	Servers          int64   `json:"servers,omitempty"`
	Published        int64   `json:"published"`
	PublishedPercent float64 `json:"published_percent,omitempty"`
	PublishedServers int64   `json:"published_servers,omitempty"`
	NonNormative     bool    `json:"non_normative"`
}

// Report is the result of one run: the content of report.json.
type Report struct {
	// Kind is what the inputs claim to be: KindReproduction (the pinned
	// snapshot), KindRelease (another census release) or KindSynthetic (a
	// synthetic census with its ground truth).
	Kind string `json:"kind"`
	// Verdict, for a reproduction, is REPRODUCED only when the inputs are
	// the pinned snapshot and every count equals the published one; NOT
	// REPRODUCED or UNVERIFIED otherwise, with the reasons in Differences.
	// For a synthetic census it is MATCHES TRUTH or DIFFERS FROM TRUTH; a
	// release has none (empty): it is not the snapshot and claims no truth.
	Verdict     string   `json:"verdict"`
	Differences []string `json:"differences"`
	Verified    bool     `json:"verified"`
	// Manifest names where the expected hashes came from: "pinned" (the
	// spec) or the --sha256sums file's base name; empty when unverified.
	Manifest string `json:"manifest"`
	Snapshot string `json:"published_snapshot"`

	// ReleaseID names the census release the run counted, and ReleaseDate
	// (YYYY-MM-DD, UTC) is the day it was taken: the snapshot's for a
	// reproduction, the crawl's end for a crawl release, and for a release
	// or synthetic census whose inputs do not say, the values run was given
	// (run --release-id, --release-date). Empty when nothing said them.
	ReleaseID   string `json:"release_id,omitempty"`
	ReleaseDate string `json:"release_date,omitempty"`

	Tools      int64             `json:"tools"`
	Servers    int64             `json:"servers"`
	Properties int64             `json:"properties"`
	Inputs     []Input           `json:"inputs"`
	Shapes     map[string]int64  `json:"shapes"`
	Classes    map[string]Class  `json:"classes"`
	Buckets    map[string]Bucket `json:"buckets"`
	Surface    []Surface         `json:"surface,omitempty"`
	// Sensitivity holds the non-normative sensitivity analyses; absent when
	// the run did not compute them.
	Sensitivity *Sensitivity `json:"sensitivity,omitempty"`
	// Definitions counts distinct tool definitions and input schemas;
	// absent in reports of runs that did not hash them.
	Definitions *Definitions `json:"definitions,omitempty"`
	Skipped     Skipped      `json:"skipped_lines"`
	// Release is the data folder's release.json, for a crawl release.
	Release *release.Release `json:"release,omitempty"`
	// Truth is a synthetic census's counts held to its ground truth.
	Truth *TruthCheck `json:"truth,omitempty"`
	// Deposit is a release's counts held to the published table of the
	// deposit it was read from (run or reproduce on a deposit).
	Deposit *DepositCheck `json:"deposit,omitempty"`
	// Baseline is a release beside a previous run (run --baseline).
	Baseline *Baseline `json:"baseline,omitempty"`
	// ClassOrder is the published table's row order, for readers of the
	// JSON that want to lay the classes out as the spec does.
	ClassOrder []string `json:"class_order"`

	// Evaluation is the labelled sample's measure of the classes (run
	// --evaluation); absent when none was given.
	Evaluation *evaluate.Evaluation `json:"evaluation,omitempty"`
}

// Percent is n of total as a percentage rounded to three decimals, as the
// published table gives it.
func Percent(n, total int64) float64 {
	if total == 0 {
		return 0
	}
	return math.Round(float64(n)*100000/float64(total)) / 1000
}

// ClassOrder returns the class ids in the published table's row order.
func ClassOrder() []string {
	ids := make([]string, len(classify.PublishedOrder()))
	for i, b := range classify.PublishedOrder() {
		ids[i] = b.ID()
	}
	return ids
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a report.json.
func ReadJSON(rd io.Reader) (*Report, error) {
	var r Report
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("not a report.json: %w", err)
	}
	if r.Classes == nil {
		return nil, fmt.Errorf("not a report.json: no \"classes\"")
	}
	return &r, nil
}

// Judge sets the verdict the report's kind can earn. A reproduction is
// REPRODUCED only when the inputs were verified against the pinned snapshot
// hashes, no line was skipped, and every count equals the published one
// (pinned reports that the manifest used was the pinned one). A synthetic
// census (r.Truth set) MATCHES TRUTH when its counts equal its ground truth
// and no line was skipped. A release gets no verdict.
func (r *Report) Judge(pinned bool) {
	switch r.EffectiveKind() {
	case KindRelease:
		// No verdict; Differences keeps what qualifies the figures.
		r.Verdict, r.Differences = "", []string{}
		if r.Skipped.Count > 0 {
			r.Differences = append(r.Differences, fmt.Sprintf("%s bad lines skipped", group(r.Skipped.Count)))
		}
		return
	case KindSynthetic:
		if r.Truth != nil {
			r.Differences = append([]string{}, r.Truth.Differences...)
			if r.Skipped.Count > 0 {
				r.Differences = append(r.Differences, fmt.Sprintf("%s bad lines skipped", group(r.Skipped.Count)))
			}
			r.Verdict = VerdictMatchesTruth
			if len(r.Differences) > 0 {
				r.Verdict = VerdictDiffersTruth
			}
			return
		}
	}
	var diffs []string
	if !r.Verified {
		diffs = append(diffs, "input hashes not verified")
	} else if !pinned {
		diffs = append(diffs, "inputs verified against "+r.Manifest+", not the pinned snapshot hashes")
	}
	if r.Skipped.Count > 0 {
		diffs = append(diffs, fmt.Sprintf("%s bad lines skipped", group(r.Skipped.Count)))
	}
	if r.Tools != published.Tools {
		diffs = append(diffs, fmt.Sprintf("tools %s, published %s", group(r.Tools), group(published.Tools)))
	}
	if r.Servers != published.Servers {
		diffs = append(diffs, fmt.Sprintf("servers %s, published %s", group(r.Servers), group(published.Servers)))
	}
	for _, id := range r.ClassOrder {
		c := r.Classes[id]
		if c.DeltaTools != 0 || c.DeltaRequired != 0 {
			diffs = append(diffs, fmt.Sprintf("%s %s/%s required, published %s/%s", id, group(c.Tools), group(c.Required), group(c.Published.Tools), group(c.Published.Required)))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
		if b := r.Buckets[id]; b.DeltaTools != 0 {
			diffs = append(diffs, fmt.Sprintf("%s %s, published %s", id, group(b.Tools), group(b.Published)))
		}
	}
	r.Differences = diffs
	switch {
	case !r.Verified:
		r.Verdict = VerdictUnverified
	case len(diffs) == 0:
		r.Verdict = VerdictReproduced
	default:
		r.Verdict = VerdictNotReproduced
	}
	if r.Differences == nil {
		r.Differences = []string{}
	}
}
