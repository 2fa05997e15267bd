package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
	"html/template"
	"maps"
	"slices"
)

// writeReleaseMarkdown writes the section on the crawl that made the data,
// when the data folder had a release.json.
func (r *Report) writeReleaseMarkdown(b *bufio.Writer) {
	rel := r.Release
	if rel == nil {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Crawl release\n\nThe data folder is a crawl release; its `release.json` says how it was made.\n\n")
	// Every text of release.json is a stranger's (a crafted release
	// can say anything): it is written as literal Markdown or code.
	md := termtext.Markdown
	p("- Crawled by %s %s", md(rel.Tool.Name), md(rel.Tool.Version))
	if rel.Tool.Revision != "" {
		p(" (revision %s%s)", mdCode(rel.Tool.Revision), map[bool]string{true: ", modified", false: ""}[rel.Tool.Modified])
	}
	p(", from %s to %s (UTC).\n", md(rel.Started), md(rel.Finished))
	if c := rel.Candidates; c.Registry != "" {
		p("- Candidates: the MCP Registry at %s", mdCode(c.Registry))
		if c.UpdatedSince != "" {
			p(", servers updated since %s", md(c.UpdatedSince))
		}
		p(".\n")
	} else {
		p("- Candidates: %s (SHA-256 %s).\n", mdCode(c.File), mdCode(c.SHA256))
	}
	o := rel.Options
	p("- Options: concurrency %d, %d per host, timeout %s, at most %s tools, %s bytes and %s pages per server, %s bytes in flight, private addresses %s.\n",
		o.Concurrency, o.PerHost, md(o.Timeout), group(int64(o.MaxTools)), group(o.MaxBytes), group(int64(o.MaxPages)), group(o.MaxMemory), map[bool]string{true: "allowed", false: "refused"}[o.AllowPrivate])
	p("- Client: protocol %s, clientInfo %s, capabilities %s.\n", md(rel.Client.ProtocolVersion), mdCode(compactRaw(rel.Client.ClientInfo)), mdCode(compactRaw(rel.Client.Capabilities)))
	n := rel.Counts
	p("- Counts: %s candidates, %s servers: %s reachable with %s tools, %s unreachable", group(int64(n.Candidates)), group(int64(n.Servers)), group(int64(n.Reachable)), group(int64(n.Tools)), group(int64(n.Unreachable)))
	if len(n.UnreachableByKind) > 0 {
		p(" (")
		for i, k := range slices.Sorted(maps.Keys(n.UnreachableByKind)) {
			if i > 0 {
				p(", ")
			}
			p("%s %s", md(k), group(int64(n.UnreachableByKind[k])))
		}
		p(")")
	}
	p(".\n")
	r.writeCountsMarkdown(b)
}

func compactRaw(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func init() {
	htmlTemplate.Funcs(template.FuncMap{"compactRaw": compactRaw})
	template.Must(htmlTemplate.New("release").Parse(releaseHTML))
}

// releaseHTML is the page's section on the crawl release, after the inputs.
const releaseHTML = `{{with .R.Release}}<h2>Crawl release</h2>
<p>The data folder is a crawl release; its <code>release.json</code> says how it was made.</p>
<table id="release">
<tbody>
<tr><th>Crawled by</th><td>{{.Tool.Name}} {{.Tool.Version}}{{if .Tool.Revision}} (revision <code>{{.Tool.Revision}}</code>{{if .Tool.Modified}}, modified{{end}}){{end}}</td></tr>
<tr><th>Time (UTC)</th><td>{{.Started}} to {{.Finished}}</td></tr>
<tr><th>Candidates</th><td>{{if .Candidates.Registry}}MCP Registry <code>{{.Candidates.Registry}}</code>{{if .Candidates.UpdatedSince}}, updated since {{.Candidates.UpdatedSince}}{{end}}{{else}}<code>{{.Candidates.File}}</code>, SHA-256 <code class="hash">{{.Candidates.SHA256}}</code>{{end}}</td></tr>
<tr><th>Options</th><td>concurrency {{.Options.Concurrency}}, {{.Options.PerHost}} per host, timeout {{.Options.Timeout}}, at most {{num .Options.MaxTools}} tools, {{num .Options.MaxBytes}} bytes and {{.Options.MaxPages}} pages per server, {{num .Options.MaxMemory}} bytes in flight, private addresses {{if .Options.AllowPrivate}}allowed{{else}}refused{{end}}</td></tr>
<tr><th>Client</th><td>protocol {{.Client.ProtocolVersion}}, clientInfo <code>{{compactRaw .Client.ClientInfo}}</code>, capabilities <code>{{compactRaw .Client.Capabilities}}</code></td></tr>
<tr><th>Counts</th><td>{{num .Counts.Candidates}} candidates, {{num .Counts.Servers}} servers: {{num .Counts.Reachable}} reachable with {{num .Counts.Tools}} tools, {{num .Counts.Unreachable}} unreachable{{with .Counts.KindCounts}} ({{range $i, $k := .}}{{if $i}}, {{end}}{{$k.Kind}} {{num $k.Count}}{{end}}){{end}}</td></tr>
</tbody>
</table>
{{template "counts" .}}{{end}}`
