package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
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

// WriteMarkdown writes report.md: our table beside the published one, the
// buckets, the inputs with their hashes, and one verdict line.
func (r *Report) WriteMarkdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("# Census reproduction report\n\n")
	if !r.Verified {
		p("> **UNVERIFIED**: the input hashes were not checked (`--no-verify`). These counts are not a reproduction of the published census.\n\n")
	}
	p("Verdict: **%s**", r.Verdict)
	if len(r.Differences) > 0 {
		p(": %s", strings.Join(r.Differences, "; "))
	}
	p("\n\n")
	p("%d tools on %d servers (%d enumerated properties); published: %d tools on %d servers, snapshot %s.\n\n",
		r.Tools, r.Servers, r.Properties, Published.Tools, Published.Servers, r.Snapshot)

	p("## Parameter risk classes\n\n")
	p("| Class | Tools (≥1 property) | %% of live | ≥1 required | Published tools | Published %% | Published ≥1 required | Δ tools | Δ required |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, id := range r.ClassOrder {
		c := r.Classes[id]
		p("| `%s` | %d | %.3f | %d | %d | %.3f | %d | %+d | %+d |\n", id, c.Tools, c.Percent, c.Required,
			c.Published.Tools, c.Published.Percent, c.Published.Required, c.DeltaTools, c.DeltaRequired)
	}
	r.writeSensitivityMarkdown(b)

	p("\n## Contextual buckets (non-normative)\n\n")
	p("High-recall buckets, reported for comparability only: they are not risk classes.\n\n")
	p("| Bucket | Tools | %% of live | Published tools | Published %% | Δ tools |\n|---|---:|---:|---:|---:|---:|\n")
	for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
		bk := r.Buckets[id]
		p("| `%s` | %d | %.3f | %d | %.3f | %+d |\n", id, bk.Tools, bk.Percent, bk.Published, bk.PublishedPercent, bk.DeltaTools)
	}

	if len(r.Surface) > 0 {
		p("\n## Tool-surface figures (non-normative, our approximation)\n\n")
		p("Computed from tool names and descriptions with the rules below; the published figures come from the archived suite, whose rules these approximate.\n\n")
		p("| Figure | Tools | %% of live | Servers | Published tools | Published %% | Published servers |\n|---|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Surface {
			p("| %s | %d | %.3f | %s | %d | %s | %s |\n", s.Title, s.Tools, s.Percent, optional(s.Servers),
				s.Published, optionalPct(s.PublishedPercent), optional(s.PublishedServers))
		}
		p("\n")
		for _, s := range r.Surface {
			p("- **%s**: %s\n", s.Title, s.Rule)
		}
	}
	if r.Definitions != nil {
		r.Definitions.writeMarkdown(p)
	}

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
		p("| `%s` | %d | %d | `%s` | `%s` | %s |\n", in.Name, in.Bytes, in.Records, in.SHA256, exp, ok)
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
		p("- %s: %d\n", k, r.Shapes[k])
	}
	if r.Skipped.Count > 0 {
		p("\n## Skipped lines\n\n%d lines were skipped (`--skip-bad`); the first:\n\n", r.Skipped.Count)
		for _, s := range r.Skipped.First {
			p("- %s line %d: %s\n", s.File, s.Line, s.Error)
		}
	}
	return b.Flush()
}

func optional(n int64) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprint(n)
}

func optionalPct(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", x)
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
