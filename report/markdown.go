package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Verdicts.
const (
	VerdictReproduced    = "REPRODUCED"
	VerdictNotReproduced = "NOT REPRODUCED"
	VerdictUnverified    = "UNVERIFIED"
)

// WriteMarkdown writes report.md, as its kind calls for: a reproduction's
// table beside the published one with its verdict; a release's own table
// beside the published snapshot in percentage points (and beside its
// baseline run); a synthetic census's counts held to its ground truth.
// Then the buckets, the inputs with their hashes, the provenance.
func (r *Report) WriteMarkdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	kind := r.EffectiveKind()
	p("# %s\n\n", r.Title())
	if !r.Verified {
		p("> **UNVERIFIED**: the input hashes were not checked (`--no-verify`). These counts are not a reproduction of the published census.\n\n")
	}
	switch kind {
	case KindRelease:
		r.writeReleaseIntroMarkdown(p)
	case KindSynthetic:
		r.writeTruthMarkdown(p)
	default:
		p("Verdict: **%s**", r.Verdict)
		if len(r.Differences) > 0 {
			p(": %s", strings.Join(r.Differences, "; "))
		}
		p("\n\n")
		p("%s tools on %s servers (%s enumerated properties); published: %s tools on %s servers, snapshot %s.\n\n",
			group(r.Tools), group(r.Servers), group(r.Properties), group(published.Tools), group(published.Servers), r.Snapshot)
	}

	p("## Parameter risk classes\n\n")
	if kind == KindReproduction {
		p("| Class | Tools (≥1 property) | %% of live | ≥1 required | Published tools | Published %% | Published ≥1 required | Δ tools | Δ required |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, id := range r.ClassOrder {
			c := r.Classes[id]
			p("| `%s` | %s | %.3f | %s | %s | %.3f | %s | %s | %s |\n", id, group(c.Tools), c.Percent, group(c.Required),
				group(c.Published.Tools), c.Published.Percent, group(c.Published.Required), signedGroup(c.DeltaTools), signedGroup(c.DeltaRequired))
		}
	} else {
		p("Percentages are of this census's live tools; the last two columns set them beside the published %s snapshot's, in percentage points (pp).\n\n", r.Snapshot)
		p("| Class | Tools (≥1 property) | %% of live | ≥1 required | %% of live (required) | Snapshot %% | Δ pp |\n")
		p("|---|---:|---:|---:|---:|---:|---:|\n")
		for _, id := range r.ClassOrder {
			c := r.Classes[id]
			p("| `%s` | %s | %.3f | %s | %.3f | %.3f | %+.3f |\n", id, group(c.Tools), c.Percent, group(c.Required),
				Percent(c.Required, r.Tools), c.Published.Percent, points(c.Percent, c.Published.Percent))
		}
	}
	if r.Baseline != nil {
		r.Baseline.writeMarkdown(p)
	}
	r.writeSensitivityMarkdown(b)

	p("\n## Contextual buckets (non-normative)\n\n")
	p("High-recall buckets, reported for comparability only: they are not risk classes.\n\n")
	if kind == KindReproduction {
		p("| Bucket | Tools | %% of live | Published tools | Published %% | Δ tools |\n|---|---:|---:|---:|---:|---:|\n")
		for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
			bk := r.Buckets[id]
			p("| `%s` | %s | %.3f | %s | %.3f | %s |\n", id, group(bk.Tools), bk.Percent, group(bk.Published), bk.PublishedPercent, signedGroup(bk.DeltaTools))
		}
	} else {
		p("| Bucket | Tools | %% of live | Snapshot %% | Δ pp |\n|---|---:|---:|---:|---:|\n")
		for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
			bk := r.Buckets[id]
			p("| `%s` | %s | %.3f | %.3f | %+.3f |\n", id, group(bk.Tools), bk.Percent, bk.PublishedPercent, points(bk.Percent, bk.PublishedPercent))
		}
	}

	if len(r.Surface) > 0 {
		p("\n## Tool-surface figures (non-normative, our approximation)\n\n")
		p("Computed from tool names and descriptions with the rules below; the published figures come from the archived suite, whose rules these approximate.\n\n")
		p("| Figure | Tools | %% of live | Servers | Published tools | Published %% | Published servers |\n|---|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Surface {
			p("| %s | %s | %.3f | %s | %s | %s | %s |\n", s.Title, group(s.Tools), s.Percent, optional(s.Servers),
				group(s.Published), optionalPct(s.PublishedPercent), optional(s.PublishedServers))
		}
		p("\n")
		for _, s := range r.Surface {
			p("- **%s**: %s\n", s.Title, s.Rule)
		}
	}
	if r.Definitions != nil {
		r.Definitions.writeMarkdown(p)
	}

	r.writeEvaluationMarkdown(b)
	p("\n## Inputs\n\n")
	if r.Verified {
		p("Expected hashes: %s.\n\n", r.Manifest)
	}
	p("| File | Bytes | Records | SHA-256 | Expected | OK |\n|---|---:|---:|---|---|---|\n")
	for _, in := range r.Inputs {
		exp, ok := in.Expected, "yes"
		if exp == "" {
			exp, ok = "(not checked)", "UNVERIFIED"
		} else if !in.OK {
			ok = "**NO**"
		}
		p("| `%s` | %s | %s | `%s` | `%s` | %s |\n", in.Name, group(in.Bytes), group(in.Records), in.SHA256, exp, ok)
	}
	p("\nRead from: ")
	for i, in := range r.Inputs {
		if i > 0 {
			p(", ")
		}
		p("`%s`", quoted(in.Location))
	}
	p("\n")
	r.writeReleaseMarkdown(b)
	p("\n## Record shapes\n\n")
	for _, k := range slices.Sorted(maps.Keys(r.Shapes)) {
		p("- %s: %s\n", k, group(r.Shapes[k]))
	}
	if r.Skipped.Count > 0 {
		p("\n## Skipped lines\n\n%s lines were skipped (`--skip-bad`); the first:\n\n", group(r.Skipped.Count))
		for _, s := range r.Skipped.First {
			p("- %s line %s: %s\n", s.File, group(s.Line), s.Error)
		}
	}
	return b.Flush()
}

func optional(n int64) string {
	if n == 0 {
		return "–"
	}
	return group(n)
}

func optionalPct(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", x)
}

// Title is the report's heading, which says what kind of run it is.
func (r *Report) Title() string {
	switch r.EffectiveKind() {
	case KindRelease:
		return "Census release report"
	case KindSynthetic:
		return "Synthetic census report"
	}
	return "Census reproduction report"
}

// points is a percentage minus the snapshot's, in percentage points rounded
// to the three decimals the percentages have.
func points(ours, snapshot float64) float64 {
	return math.Round((ours-snapshot)*1000) / 1000
}

// signedGroup is n with its sign and thousands separators, as %+d signs.
func signedGroup(n int64) string {
	if n >= 0 {
		return "+" + group(n)
	}
	return group(n)
}

// releaseClaim says what a release's inputs were verified against.
func (r *Report) releaseClaim() string {
	switch {
	case !r.Verified:
		return "its inputs were not checked"
	case r.Manifest != "":
		return "its inputs were verified against `" + r.Manifest + "`, not the pinned hashes"
	}
	return "its inputs are not the pinned files"
}

func (r *Report) writeReleaseIntroMarkdown(p func(string, ...any)) {
	if d := r.Deposit; d != nil && d.Verdict != "" {
		p("Verdict: **%s** against the deposit's published table", d.Verdict)
		if len(d.Differences) > 0 {
			p(": %s", strings.Join(d.Differences, "; "))
		}
		p("\n\n")
	}
	if r.Deposit != nil {
		p("This census release is a deposit made by publish, held to its own published table (its report.json and classes.parquet), not to the %s snapshot's", r.Snapshot)
	} else {
		p("This census release is not the published %s snapshot (%s), so it gets no reproduction verdict: its figures stand on their own", r.Snapshot, r.releaseClaim())
	}
	if r.Baseline != nil {
		p(", beside the baseline run `%s`", r.Baseline.Dir)
	}
	p(" and beside the published snapshot's in percentage points.")
	if r.Release != nil {
		p(" Its provenance (`release.json`) is below.")
	}
	if len(r.Differences) > 0 {
		p(" Caveats: %s.", strings.Join(r.Differences, "; "))
	}
	p("\n\n%s tools on %s servers (%s enumerated properties).\n\n", group(r.Tools), group(r.Servers), group(r.Properties))
}

func (r *Report) writeTruthMarkdown(p func(string, ...any)) {
	t := r.Truth
	if t == nil {
		p("This census is synthetic; no ground truth was read, so its counts are not checked.\n\n")
		return
	}
	p("Verdict: **%s**", r.Verdict)
	if r.Verdict == VerdictMatchesTruth {
		p(": every count equals the synthetic census's own ground truth (`%s`): tools, servers, record shapes, the five classes with their required counts, and the two buckets.\n\n", t.File)
	} else {
		p(" (`%s`): %s.\n\n", t.File, strings.Join(r.Differences, "; "))
	}
	p("%s tools on %s servers (%s enumerated properties). The census is synthetic: the published table it is set beside below is the %s snapshot's, for scale, and is not expected to match.\n\n",
		group(r.Tools), group(r.Servers), group(r.Properties), r.Snapshot)
	p("| Count | This run | Truth | |\n|---|---:|---:|---|\n")
	row := func(what string, ours, truth int64) {
		mark := "equal"
		if ours != truth {
			mark = "**differs**"
		}
		p("| %s | %s | %s | %s |\n", what, group(ours), group(truth), mark)
	}
	row("tools", r.Tools, t.Truth.Tools)
	row("servers", r.Servers, t.Truth.Servers)
	for _, id := range r.ClassOrder {
		row("`"+id+"` tools", r.Classes[id].Tools, t.Truth.Classes[id].Tools)
		row("`"+id+"` ≥1 required", r.Classes[id].Required, t.Truth.Classes[id].Required)
	}
	for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
		row("`"+id+"` (bucket)", r.Buckets[id].Tools, t.Truth.Buckets[id])
	}
	for _, k := range slices.Sorted(maps.Keys(union(r.Shapes, t.Truth.Shapes))) {
		row("records of shape "+k, r.Shapes[k], t.Truth.Shapes[k])
	}
	p("\n")
}

func (b *Baseline) writeMarkdown(p func(string, ...any)) {
	d := b.Diff
	p("\n## Beside the baseline run\n\n")
	p("The previous run `%s` (old) beside this one (new), class by class and tool by tool, as `diff` compares them.\n\n", b.Dir)
	d.writeBody(p, "#")
}

// quoted returns s as it is when every rune is printable, and otherwise
// quoted as strconv.Quote does: an input's location may name a zip member
// whose name, the archive author's, holds escape sequences or newlines, and
// report.md is printed to terminals (reproduce prints it).
func quoted(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
