package report

import (
	"bufio"
	"fmt"
	"html/template"

	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
)

// The package-type section: how many servers of a crawl release were
// remotes or packages of each registry type (npm, pypi, oci, mcpb,
// nuget), and how each ended: reachable, or its error kind. report.json
// carries the same counts in release.counts.by_package_type.

// writePackageTypesMarkdown writes the counts by type and outcome, when
// release.json has them.
func (r *Report) writePackageTypesMarkdown(b *bufio.Writer) {
	if r.Release == nil || len(r.Release.Counts.ByPackageType) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Servers by type\n\nServers by what they are (a remote, or a package's registry type) and how the crawl ended (reachable, or the error kind).\n\n")
	fmt.Fprintf(b, "| Type | Outcome | Servers |\n|---|---|---:|\n")
	for _, c := range r.Release.Counts.ByPackageType {
		fmt.Fprintf(b, "| %s | %s | %d |\n", termtext.Markdown(c.Type), termtext.Markdown(c.Outcome), c.Servers)
	}
}

func init() {
	template.Must(htmlTemplate.New("packagetypes").Parse(packageTypesHTML))
}

// packageTypesHTML is the page's table of the same counts, inside the
// crawl release section; its dot is the release.
const packageTypesHTML = `{{with .Counts.ByPackageType}}<h3>Servers by type</h3>
<p>Servers by what they are (a remote, or a package's registry type) and how the crawl ended (reachable, or the error kind).</p>
<table id="package-types">
<thead><tr><th>Type</th><th>Outcome</th><th>Servers</th></tr></thead>
<tbody>
{{range .}}<tr><td>{{.Type}}</td><td>{{.Outcome}}</td><td>{{.Servers}}</td></tr>
{{end}}</tbody>
</table>
{{end}}`
