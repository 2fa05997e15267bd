package report

import (
	"bufio"
	"fmt"
	"html/template"

	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
)

// The protocol section: how many servers of a crawl release spoke each
// protocol version, by generation (stateless, reached by server/discover;
// session, reached by initialize). report.json carries the same counts in
// release.counts.by_protocol.

// writeProtocolsMarkdown writes the counts of a release's servers by
// protocol version and generation, when release.json has them.
func (r *Report) writeProtocolsMarkdown(b *bufio.Writer) {
	if r.Release == nil || len(r.Release.Counts.ByProtocol) == 0 {
		return
	}
	counts := r.Release.Counts.ByProtocol
	writeCountsMarkdown(b, "Protocol versions",
		"Servers that named a protocol version, by version and generation (stateless: `server/discover`; session: `initialize`).",
		"Protocol version", "Generation", len(counts), func(i int) (string, string, int) {
			return counts[i].ProtocolVersion, counts[i].Generation, counts[i].Servers
		})
}

// writeCountsMarkdown writes one of a crawl release's count tables: its
// heading, what it counts, and n rows of two labels (escaped: they come
// from servers) and a number of servers.
func writeCountsMarkdown(b *bufio.Writer, title, about, first, second string, n int, row func(i int) (string, string, int)) {
	fmt.Fprintf(b, "\n### %s\n\n%s\n\n", title, about)
	fmt.Fprintf(b, "| %s | %s | Servers |\n|---|---|---:|\n", first, second)
	for i := range n {
		x, y, servers := row(i)
		fmt.Fprintf(b, "| %s | %s | %d |\n", termtext.Markdown(x), termtext.Markdown(y), servers)
	}
}

func init() {
	template.Must(htmlTemplate.New("protocols").Parse(protocolsHTML))
}

// protocolsHTML is the page's table of the same counts, inside the crawl
// release section; its dot is the release.
const protocolsHTML = `{{with .Counts.ByProtocol}}<h3>Protocol versions</h3>
<p>Servers that named a protocol version, by version and generation (stateless: <code>server/discover</code>; session: <code>initialize</code>).</p>
<table id="protocols">
<thead><tr><th>Protocol version</th><th>Generation</th><th>Servers</th></tr></thead>
<tbody>
{{range .}}<tr><td>{{.ProtocolVersion}}</td><td>{{.Generation}}</td><td>{{.Servers}}</td></tr>
{{end}}</tbody>
</table>
{{end}}`
