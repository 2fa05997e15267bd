package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
	"io"
	"math"
	"sort"
	"strings"
)

// DiffResult is what changed from one report to another: two census
// releases, or our run and a reference. It is the content of `diff --json`.
type DiffResult struct {
	Old        DiffSide      `json:"old"`
	New        DiffSide      `json:"new"`
	Tools      ToolsTotals   `json:"tools"`
	Servers    ServersTotals `json:"servers"`
	Properties Change        `json:"properties"`
	// Classes are in the published table's row order.
	Classes []ClassDiff `json:"classes"`
	// Buckets are the non-normative contextual buckets, by id.
	Buckets []BucketDiff `json:"buckets"`
	// Surface holds the non-normative tool-surface figures, when either
	// report has them.
	Surface []SurfaceDiff `json:"surface,omitempty"`
	// OptionsDiffer names the crawl options that differ when both reports
	// are of crawl releases: their counts are then not like for like.
	OptionsDiffer []string `json:"crawl_options_differ,omitempty"`

	// The tool-level comparison (AddTools), when both sides are run
	// folders: per class, the tools that gained and lost it (see
	// ToolDiff), and the first rows of each list of changes.
	ClassesGained  map[string]int64 `json:"classes_gained,omitempty"`
	ClassesLost    map[string]int64 `json:"classes_lost,omitempty"`
	RequiredGained map[string]int64 `json:"required_classes_gained,omitempty"`
	RequiredLost   map[string]int64 `json:"required_classes_lost,omitempty"`
	ToolChanges    *ToolChanges     `json:"tool_changes,omitempty"`
}

// DiffSide is what a diff says about each report as a whole.
type DiffSide struct {
	// Label names the report for the reader (its file name); Diff sets
	// "old" and "new".
	Label string `json:"label"`
	// Kind is the report's kind (reproduction, release, synthetic).
	Kind     string `json:"kind"`
	Verdict  string `json:"verdict"`
	Verified bool   `json:"verified"`
	Manifest string `json:"manifest"`
	Snapshot string `json:"published_snapshot"`
}

// Change is a count in both reports and New - Old.
type Change struct {
	Old    int64 `json:"old"`
	New    int64 `json:"new"`
	Change int64 `json:"change"`
}

// Share is a tool count with its percentage of live tools in both reports;
// ChangePoints is the change in percentage points, rounded to the three
// decimals the percentages have.
type Share struct {
	Change
	OldPercent   float64 `json:"old_percent"`
	NewPercent   float64 `json:"new_percent"`
	ChangePoints float64 `json:"change_points"`
}

// ClassDiff is one parameter risk class in both reports.
type ClassDiff struct {
	ID    string `json:"id"`
	Tools Share  `json:"tools"`
	// Required counts tools with at least one labelled property that is
	// also required.
	Required Change `json:"required"`
	// Missing is "old" or "new" when that report has no row for the id
	// (its counts are then zero); empty when both have one.
	Missing string `json:"missing,omitempty"`
}

// BucketDiff is one non-normative contextual bucket in both reports.
type BucketDiff struct {
	ID           string `json:"id"`
	Tools        Share  `json:"tools"`
	Missing      string `json:"missing,omitempty"`
	NonNormative bool   `json:"non_normative"`
}

// SurfaceDiff is one non-normative tool-surface figure in both reports.
type SurfaceDiff struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Tools Share  `json:"tools"`
	// Servers is zero on both sides for figures that count no servers.
	Servers      Change `json:"servers"`
	Missing      string `json:"missing,omitempty"`
	NonNormative bool   `json:"non_normative"`
}

// Diff compares two reports. Rows present in only one of them are kept, with
// zero counts on the other side and Missing saying which, so that a class or
// figure added or dropped by a release shows up rather than vanishing.
func Diff(old, new *Report) *DiffResult {
	d := &DiffResult{
		Old:        side("old", old),
		New:        side("new", new),
		Tools:      ToolsTotals{Change: change(old.Tools, new.Tools)},
		Servers:    ServersTotals{Change: change(old.Servers, new.Servers)},
		Properties: change(old.Properties, new.Properties),
		// Releases crawled with other bounds or another client are not
		// like for like; the reader must be told.
		OptionsDiffer: release.OptionsDiffer(old.Release, new.Release),
	}
	classOrder := ClassOrder()
	if len(new.ClassOrder) > 0 || len(old.ClassOrder) > 0 {
		classOrder = nil
	}
	for _, id := range unionOrder(keys(old.Classes), keys(new.Classes), new.ClassOrder, old.ClassOrder, classOrder) {
		o, inOld := old.Classes[id]
		n, inNew := new.Classes[id]
		d.Classes = append(d.Classes, ClassDiff{
			ID:       id,
			Tools:    share(o.Tools, n.Tools, o.Percent, n.Percent),
			Required: change(o.Required, n.Required),
			Missing:  missing(inOld, inNew),
		})
	}
	for _, id := range unionOrder(keys(old.Buckets), keys(new.Buckets)) {
		o, inOld := old.Buckets[id]
		n, inNew := new.Buckets[id]
		d.Buckets = append(d.Buckets, BucketDiff{
			ID:           id,
			Tools:        share(o.Tools, n.Tools, o.Percent, n.Percent),
			Missing:      missing(inOld, inNew),
			NonNormative: true,
		})
	}
	oldSurface, newSurface := surfaceByID(old.Surface), surfaceByID(new.Surface)
	var newIDs, oldIDs []string
	for _, s := range new.Surface {
		newIDs = append(newIDs, s.ID)
	}
	for _, s := range old.Surface {
		oldIDs = append(oldIDs, s.ID)
	}
	for _, id := range unionOrder(nil, nil, newIDs, oldIDs) {
		o, inOld := oldSurface[id]
		n, inNew := newSurface[id]
		title := n.Title
		if !inNew {
			title = o.Title
		}
		d.Surface = append(d.Surface, SurfaceDiff{
			ID:           id,
			Title:        title,
			Tools:        share(o.Tools, n.Tools, o.Percent, n.Percent),
			Servers:      change(o.Servers, n.Servers),
			Missing:      missing(inOld, inNew),
			NonNormative: true,
		})
	}
	return d
}

func side(label string, r *Report) DiffSide {
	return DiffSide{Label: label, Kind: r.EffectiveKind(), Verdict: r.Verdict, Verified: r.Verified, Manifest: r.Manifest, Snapshot: r.Snapshot}
}

func change(o, n int64) Change { return Change{Old: o, New: n, Change: n - o} }

func share(o, n int64, op, np float64) Share {
	// Rounded so that 13.889 - 13.837 reads 0.052, not 0.05199999999999960.
	return Share{Change: change(o, n), OldPercent: op, NewPercent: np, ChangePoints: math.Round((np-op)*1000) / 1000}
}

func missing(inOld, inNew bool) string {
	switch {
	case !inOld && inNew:
		return "old"
	case inOld && !inNew:
		return "new"
	}
	return ""
}

func keys[V any](m map[string]V) map[string]bool {
	s := make(map[string]bool, len(m))
	for k := range m {
		s[k] = true
	}
	return s
}

func surfaceByID(ss []Surface) map[string]Surface {
	m := make(map[string]Surface, len(ss))
	for _, s := range ss {
		m[s.ID] = s
	}
	return m
}

// unionOrder lists the ids of a and b: first in the given orders (the first
// occurrence wins), then the rest sorted. Ids an order names but neither set
// holds are dropped, unless both sets are nil (the orders are the ids).
func unionOrder(a, b map[string]bool, orders ...[]string) []string {
	all := a == nil && b == nil
	seen := map[string]bool{}
	var ids []string
	for _, order := range orders {
		for _, id := range order {
			if !seen[id] && (all || a[id] || b[id]) {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	var rest []string
	for _, set := range []map[string]bool{a, b} {
		for id := range set {
			if !seen[id] {
				seen[id] = true
				rest = append(rest, id)
			}
		}
	}
	sort.Strings(rest)
	return append(ids, rest...)
}

// WriteJSON writes d as indented JSON.
func (d *DiffResult) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// WriteMarkdown writes d as a Markdown document: the two reports side by
// side, then one table per kind of row, each with both counts, both
// percentages and the changes.
func (d *DiffResult) WriteMarkdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("# Census comparison\n\n")
	d.writeBody(p, "")
	return b.Flush()
}

// writeBody writes the comparison under a heading of the reader's: h is
// prepended to each section's "##" (a report nests it one level deeper).
func (d *DiffResult) writeBody(p func(string, ...any), h string) {
	p("Old: %s. New: %s.\n\n", mdCode(d.Old.Label), mdCode(d.New.Label))
	for _, s := range []DiffSide{d.Old, d.New} {
		if !s.Verified {
			p("> **UNVERIFIED**: the input hashes of %s were not checked; its counts are not a reproduction of a published census.\n\n", mdCode(s.Label))
		}
	}
	p("| | Old | New | Change |\n|---|---|---|---:|\n")
	p("| Report | %s | %s | |\n", mdText(d.Old.Kind), mdText(d.New.Kind))
	p("| Verdict | %s | %s | |\n", mdText(d.Old.Verdict), mdText(d.New.Verdict))
	p("| Verified | %s | %s | |\n", verifiedText(d.Old), verifiedText(d.New))
	p("| Published snapshot | %s | %s | |\n", mdText(d.Old.Snapshot), mdText(d.New.Snapshot))
	for _, row := range []struct {
		name string
		c    Change
	}{{"Tools", d.Tools.Change}, {"Servers", d.Servers.Change}, {"Properties", d.Properties}} {
		p("| %s | %s | %s | %s |\n", row.name, group(row.c.Old), group(row.c.New), signedGroup(row.c.Change))
	}
	if len(d.OptionsDiffer) > 0 {
		p("\n> **Crawled with different options**: the two releases are not like for like (%s).\n", mdText(strings.Join(d.OptionsDiffer, "; ")))
	}

	p("\n%s## Parameter risk classes\n\n", h)
	p("Percentages are of each report's own live tools; Δ pp is the change in percentage points.\n\n")
	p("| Class | Old tools | Old %% | New tools | New %% | Δ tools | Δ pp | Old ≥1 required | New ≥1 required | Δ required |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range d.Classes {
		p("| %s%s | %s | %s |\n", mdCode(c.ID), missingNote(c.Missing), shareCells(c.Tools, c.Missing),
			changeCells(c.Required, c.Missing))
	}

	p("\n%s## Contextual buckets (non-normative)\n\n", h)
	p("High-recall buckets, compared for completeness only: they are not risk classes.\n\n")
	p("| Bucket | Old tools | Old %% | New tools | New %% | Δ tools | Δ pp |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, bk := range d.Buckets {
		p("| %s%s | %s |\n", mdCode(bk.ID), missingNote(bk.Missing), shareCells(bk.Tools, bk.Missing))
	}

	if len(d.Surface) > 0 {
		p("\n%s## Tool-surface figures (non-normative)\n\n", h)
		p("Approximations computed from tool names and descriptions; each report states the rule it used.\n\n")
		p("| Figure | Old tools | Old %% | New tools | New %% | Δ tools | Δ pp | Old servers | New servers | Δ servers |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range d.Surface {
			servers := changeCells(s.Servers, s.Missing)
			if s.Servers.Old == 0 && s.Servers.New == 0 {
				// The figure counts no servers.
				servers = "– | – | –"
			}
			p("| %s%s | %s | %s |\n", mdText(s.Title), missingNote(s.Missing), shareCells(s.Tools, s.Missing), servers)
		}
	}
	if d.Tools.ToolCounts != nil {
		d.writeToolsMarkdown(p, h)
	}
}

// shareCells is the six cells of a Share. The side without the row, and the
// changes, show a dash rather than numbers that would read as a count.
func shareCells(s Share, missing string) string {
	oldN, oldP := group(s.Old), fmt.Sprintf("%.3f", s.OldPercent)
	newN, newP := group(s.New), fmt.Sprintf("%.3f", s.NewPercent)
	switch missing {
	case "old":
		oldN, oldP = "–", "–"
	case "new":
		newN, newP = "–", "–"
	}
	dn, dp := signedGroup(s.Change.Change), fmt.Sprintf("%+.3f", s.ChangePoints)
	if missing != "" {
		dn, dp = "–", "–"
	}
	return strings.Join([]string{oldN, oldP, newN, newP, dn, dp}, " | ")
}

// changeCells is the Old, New and change cells of a Change.
func changeCells(c Change, missing string) string {
	o, n, d := group(c.Old), group(c.New), signedGroup(c.Change)
	switch missing {
	case "old":
		o, d = "–", "–"
	case "new":
		n, d = "–", "–"
	}
	return o + " | " + n + " | " + d
}

func missingNote(m string) string {
	if m == "" {
		return ""
	}
	return " (not in " + m + ")"
}

func verifiedText(s DiffSide) string {
	if !s.Verified {
		return "no"
	}
	if s.Manifest == "" {
		return "yes"
	}
	return "yes (" + mdText(s.Manifest) + ")"
}

// mdText makes s safe inside a Markdown table cell: a '|' would end the cell
// and a newline the row.
func mdText(s string) string {
	if s == "" {
		return "–"
	}
	s = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	// A crafted name's control sequences would act on the terminal
	// diff prints to.
	return termtext.Safe(s)
}

// mdCode writes s as inline code; a backtick inside would end it, so the
// fence is made one longer than the longest backtick run.
func mdCode(s string) string {
	if s == "" {
		return "–"
	}
	s = mdText(s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
