package report

import (
	"bufio"
	"html/template"
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
	counts := r.Release.Counts.ByPackageType
	writeCountsMarkdown(b, "Servers by type",
		"Servers by what they are (a remote, or a package's registry type) and how the crawl ended (reachable, or the error kind).",
		"Type", "Outcome", len(counts), func(i int) (string, string, int) {
			return counts[i].Type, counts[i].Outcome, counts[i].Servers
		})
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
