package report

import (
	"bufio"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
	"html/template"
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
	fmt.Fprintf(b, "\n### Protocol versions\n\nServers that named a protocol version, by version and generation (stateless: `server/discover`; session: `initialize`).\n\n")
	fmt.Fprintf(b, "| Protocol version | Generation | Servers |\n|---|---|---:|\n")
	for _, c := range r.Release.Counts.ByProtocol {
		fmt.Fprintf(b, "| %s | %s | %d |\n", termtext.Markdown(c.ProtocolVersion), termtext.Markdown(c.Generation), c.Servers)
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
