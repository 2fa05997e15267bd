package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
)

// HistoryRow is one row of a history dataset's history.parquet: one class
// (or non-normative bucket) of one release, and what changed since the
// release before it. The pointers are null where there is no figure: the
// required count of a bucket, and the comparison of the first release
// (and of a bucket, which the tool-by-tool comparison does not follow).
type HistoryRow struct {
	Release string `json:"release"`
	// Date is the day the census was taken, YYYY-MM-DD.
	Date string `json:"date"`
	// Class is a gg: class id, or a bucket's id (Normative false).
	Class     string `json:"class"`
	Normative bool   `json:"normative"`
	Tools     int64  `json:"tools"`
	// Required counts the tools with a property of the class that is also
	// required.
	Required *int64 `json:"required"`
	// Percent is Tools of LiveTools, as report.json gives it.
	Percent   float64 `json:"percent"`
	LiveTools int64   `json:"live_tools"`
	Servers   int64   `json:"servers"`
	// ToolsAdded, ToolsRemoved and ToolsChanged are the release's tools
	// beside the release before it (the same on each of its rows); Gained
	// and Lost the tools that gained and lost the class, as diff counts
	// them.
	ToolsAdded   *int64 `json:"tools_added"`
	ToolsRemoved *int64 `json:"tools_removed"`
	ToolsChanged *int64 `json:"tools_changed"`
	Gained       *int64 `json:"gained"`
	Lost         *int64 `json:"lost"`
}

// HistoryRows returns the rows of the release r: its classes in the
// published order, then its buckets by id. prev is its tool-by-tool
// comparison with the release before it, nil for the first.
func HistoryRows(r *Report, prev *ToolDiff) []HistoryRow {
	ptr := func(n int64) *int64 { return &n }
	base := HistoryRow{Release: r.ReleaseID, Date: r.ReleaseDate, LiveTools: r.Tools, Servers: r.Servers}
	if prev != nil {
		base.ToolsAdded, base.ToolsRemoved, base.ToolsChanged = ptr(prev.Tools.Added), ptr(prev.Tools.Removed), ptr(prev.Tools.Changed)
	}
	var rows []HistoryRow
	for _, id := range htmlClassOrder(r) {
		c := r.Classes[id]
		row := base
		row.Class, row.Normative, row.Tools, row.Required, row.Percent = id, true, c.Tools, ptr(c.Required), c.Percent
		if prev != nil {
			row.Gained, row.Lost = ptr(prev.ClassesGained[id]), ptr(prev.ClassesLost[id])
		}
		rows = append(rows, row)
	}
	for _, id := range slices.Sorted(maps.Keys(r.Buckets)) {
		b := r.Buckets[id]
		row := base
		row.Class, row.Tools, row.Percent = id, b.Tools, b.Percent
		rows = append(rows, row)
	}
	return rows
}

// historyRelease is one release of a history: its rows, the first of
// which carries the release's own figures.
type historyRelease struct {
	HistoryRow
	Rows []HistoryRow
}

// byRelease groups rows, which hold each release's rows together, by
// release.
func byRelease(rows []HistoryRow) []historyRelease {
	var out []historyRelease
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Release != r.Release {
			out = append(out, historyRelease{HistoryRow: r})
		}
		out[len(out)-1].Rows = append(out[len(out)-1].Rows, r)
	}
	return out
}

// WriteHistoryMarkdown writes history.md: the releases with their tools
// added, removed and changed, the class shares release by release, and
// every row of history.parquet.
func WriteHistoryMarkdown(w io.Writer, rows []HistoryRow) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	rels := byRelease(rows)
	p("# The census over time\n\n")
	p("%d releases, by the day each census was taken. Percentages are of each release's live tools; tools added, removed and changed, and the tools that gained or lost a class, are beside the release before, as `diff` compares two runs. The published snapshot (%s) had these shares: ", len(rels), published.Snapshot)
	for i, id := range ClassOrder() {
		if i > 0 {
			p(", ")
		}
		p("%s %.3f%%", mdCode(id), published.Classes[id].Percent)
	}
	p(".\n\n## Releases\n\n")
	p("| Release | Date | Live tools | Servers | Added | Removed | Changed |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rels {
		p("| %s | %s | %s | %s | %s | %s | %s |\n", mdCode(r.Release), r.Date, group(r.LiveTools), group(r.Servers), optGroup(r.ToolsAdded), optGroup(r.ToolsRemoved), optGroup(r.ToolsChanged))
	}
	p("\n## Class shares (%% of live tools)\n\n| Release | Date |")
	for _, id := range ClassOrder() {
		p(" %s |", mdCode(id))
	}
	p("\n|---|---|%s\n", repeat("---:|", len(ClassOrder())))
	for _, r := range rels {
		p("| %s | %s |", mdCode(r.Release), r.Date)
		for _, id := range ClassOrder() {
			cell := "–"
			for _, x := range r.Rows {
				if x.Class == id {
					cell = fmt.Sprintf("%.3f", x.Percent)
				}
			}
			p(" %s |", cell)
		}
		p("\n")
	}
	p("\n## Every release and class\n\n")
	p("The rows of `history.parquet`; the buckets are non-normative (not risk classes), and the comparison does not follow them.\n\n")
	p("| Release | Date | Class | Normative | Tools | ≥1 required | %% of live | Gained | Lost |\n|---|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		p("| %s | %s | %s | %v | %s | %s | %.3f | %s | %s |\n", mdCode(r.Release), r.Date, mdCode(r.Class), r.Normative, group(r.Tools), optGroup(r.Required), r.Percent, optGroup(r.Gained), optGroup(r.Lost))
	}
	return b.Flush()
}

func optGroup(n *int64) string {
	if n == nil {
		return "–"
	}
	return group(*n)
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}
