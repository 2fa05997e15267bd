package report

import (
	"bufio"
	"fmt"
	"html/template"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
)

// The count tables of the crawl release section: how many of the
// release's servers spoke each protocol version, by generation
// (stateless, reached by server/discover; session, reached by
// initialize), and how many were remotes or packages of each registry
// type (npm, pypi, oci, mcpb, nuget) and how each ended: reachable, or its
// error kind. report.json carries the same counts in release.counts
// (by_protocol, by_package_type).

// countTable is one count table, described once for report.md and
// report.html: a heading, what it counts, two label columns and the
// servers of each row.
type countTable struct {
	id, title     string
	about         string        // what it counts, as Markdown
	aboutHTML     template.HTML // the same, as HTML
	first, second string        // the label columns' headings
	rows          func(*Release) []countRow
}

// countRow is one row of a count table: two labels (a server's words,
// escaped where they are written) and a number of servers.
type countRow struct {
	First, Second string
	Servers       int
}

// countTables are the tables in the order both outputs write them.
var countTables = []countTable{
	{id: "protocols", title: "Protocol versions", first: "Protocol version", second: "Generation",
		about:     "Servers that named a protocol version, by version and generation (stateless: `server/discover`; session: `initialize`).",
		aboutHTML: "Servers that named a protocol version, by version and generation (stateless: <code>server/discover</code>; session: <code>initialize</code>).",
		rows:      func(rel *Release) []countRow { return rowsOf(rel.Counts.ByProtocol, protocolRow) }},
	{id: "package-types", title: "Servers by type", first: "Type", second: "Outcome",
		about:     "Servers by what they are (a remote, or a package's registry type) and how the crawl ended (reachable, or the error kind).",
		aboutHTML: "Servers by what they are (a remote, or a package's registry type) and how the crawl ended (reachable, or the error kind).",
		rows:      func(rel *Release) []countRow { return rowsOf(rel.Counts.ByPackageType, packageTypeRow) }},
}

// rowsOf is one count table's rows, one for each of counts.
func rowsOf[C any](counts []C, row func(C) countRow) []countRow {
	rows := make([]countRow, len(counts))
	for i, c := range counts {
		rows[i] = row(c)
	}
	return rows
}

func protocolRow(c release.ProtocolCount) countRow {
	return countRow{c.ProtocolVersion, c.Generation, c.Servers}
}

func packageTypeRow(c release.PackageTypeCount) countRow {
	return countRow{c.Type, c.Outcome, c.Servers}
}

// countView is a count table with rows, as the page's template reads it.
type countView struct {
	ID, Title     string
	About         template.HTML
	First, Second string
	Rows          []countRow
}

// countViews returns the count tables rel has rows for.
func countViews(rel *Release) []countView {
	var views []countView
	for _, t := range countTables {
		if rows := t.rows(rel); len(rows) > 0 {
			views = append(views, countView{t.id, t.title, t.aboutHTML, t.first, t.second, rows})
		}
	}
	return views
}

// writeCountsMarkdown writes the count tables release.json has rows for:
// each its heading, what it counts, and its rows (the labels escaped: they
// come from servers).
func (r *Report) writeCountsMarkdown(b *bufio.Writer) {
	if r.Release == nil {
		return
	}
	for _, t := range countTables {
		rows := t.rows(r.Release)
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n### %s\n\n%s\n\n", t.title, t.about)
		fmt.Fprintf(b, "| %s | %s | Servers |\n|---|---|---:|\n", t.first, t.second)
		for _, row := range rows {
			fmt.Fprintf(b, "| %s | %s | %d |\n", termtext.Markdown(row.First), termtext.Markdown(row.Second), row.Servers)
		}
	}
}

func init() {
	htmlTemplate.Funcs(template.FuncMap{"countViews": countViews})
	template.Must(htmlTemplate.New("counts").Parse(countsHTML))
}

// countsHTML is the page's count tables, inside the crawl release
// section; its dot is the release.
const countsHTML = `{{range countViews .}}<h3>{{.Title}}</h3>
<p>{{.About}}</p>
<table id="{{.ID}}">
<thead><tr><th>{{.First}}</th><th>{{.Second}}</th><th>Servers</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{.First}}</td><td>{{.Second}}</td><td>{{.Servers}}</td></tr>
{{end}}</tbody>
</table>
{{end}}`
