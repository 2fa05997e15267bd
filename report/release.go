package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
)

// ReleaseFile is the provenance file of a crawl release, listed in its
// SHA256SUMS.
const ReleaseFile = "release.json"

// Release is release.json: how a census release was crawled.
type Release struct {
	// Tool is the crawler's version and VCS revision.
	Tool ReleaseTool `json:"tool"`
	// Started and Finished are the start and end, UTC, RFC 3339, of the
	// crawl run that wrote the release (for a resumed crawl, the last run;
	// servers journalled by earlier runs were probed before Started).
	Started  string `json:"started"`
	Finished string `json:"finished"`
	// Options are the crawl's bounds.
	Options ReleaseOptions `json:"options"`
	// Client is what the crawler declared in initialize.
	Client ReleaseClient `json:"client"`
	// Candidates is where the servers came from.
	Candidates ReleaseSource `json:"candidates"`
	// Counts are what the crawl found.
	Counts ReleaseCounts `json:"counts"`
}

// ReleaseTool names the build that crawled.
type ReleaseTool struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go,omitempty"`
}

// ReleaseOptions are the bounds of a crawl; two releases crawled with
// different ones are not like for like.
type ReleaseOptions struct {
	Concurrency  int    `json:"concurrency"`
	PerHost      int    `json:"per_host"`
	Timeout      string `json:"timeout"`
	MaxTools     int    `json:"max_tools"`
	MaxBytes     int64  `json:"max_bytes"`
	MaxPages     int    `json:"max_pages"`
	MaxMemory    int64  `json:"max_memory"`
	AllowPrivate bool   `json:"allow_private"`
	OmitElapsed  bool   `json:"omit_elapsed"`
}

// ReleaseClient is the client side of initialize.
type ReleaseClient struct {
	ProtocolVersion string          `json:"protocol_version"`
	ClientInfo      json.RawMessage `json:"client_info"`
	Capabilities    json.RawMessage `json:"capabilities"`
}

// ReleaseSource is a candidates file and its SHA-256, or a registry and
// the updated_since filter its list was read with.
type ReleaseSource struct {
	File         string `json:"file,omitempty"`
	SHA256       string `json:"sha256,omitempty"`
	Registry     string `json:"registry,omitempty"`
	UpdatedSince string `json:"updated_since,omitempty"`
}

// ReleaseCounts are a release's totals.
type ReleaseCounts struct {
	// Candidates are the candidate lines; Servers the distinct servers.
	Candidates  int `json:"candidates"`
	Servers     int `json:"servers"`
	Reachable   int `json:"reachable"`
	Unreachable int `json:"unreachable"`
	// UnreachableByKind counts the unreachable servers by error_kind.
	UnreachableByKind map[string]int `json:"unreachable_by_kind"`
	Tools             int            `json:"tools"`
}

// ReadRelease reads dir's release.json; a folder without one (the frozen
// snapshot, say), or data that is not a folder, gives nil and no error.
func ReadRelease(dir string) (*Release, error) {
	r, _, err := ReadReleaseBytes(dir)
	return r, err
}

// ReadReleaseBytes is ReadRelease that also returns the file's bytes, for
// a reader that checks them against a manifest.
func ReadReleaseBytes(dir string) (*Release, []byte, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil, nil
	}
	name := filepath.Join(dir, ReleaseFile)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var r Release
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("%s: not a release.json: %w", name, err)
	}
	return &r, b, nil
}

// OptionsDiffer names the crawl options, and the client declarations,
// that differ between two releases, sorted; nil when either is unknown.
func OptionsDiffer(a, b *Release) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	va, vb := reflect.ValueOf(a.Options), reflect.ValueOf(b.Options)
	for i := range va.NumField() {
		if va.Field(i).Interface() != vb.Field(i).Interface() {
			tag := va.Type().Field(i).Tag.Get("json")
			out = append(out, fmt.Sprintf("%s: %v → %v", tag, va.Field(i).Interface(), vb.Field(i).Interface()))
		}
	}
	if a.Client.ProtocolVersion != b.Client.ProtocolVersion {
		out = append(out, fmt.Sprintf("protocol_version: %s → %s", a.Client.ProtocolVersion, b.Client.ProtocolVersion))
	}
	if string(a.Client.Capabilities) != string(b.Client.Capabilities) {
		out = append(out, fmt.Sprintf("client capabilities: %s → %s", a.Client.Capabilities, b.Client.Capabilities))
	}
	sort.Strings(out)
	return out
}

// writeReleaseMarkdown writes the section on the crawl that made the data,
// when the data folder had a release.json.
func (r *Report) writeReleaseMarkdown(b *bufio.Writer) {
	rel := r.Release
	if rel == nil {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Crawl release\n\nThe data folder is a crawl release; its `release.json` says how it was made.\n\n")
	p("- Crawled by %s %s", rel.Tool.Name, rel.Tool.Version)
	if rel.Tool.Revision != "" {
		p(" (revision `%s`%s)", rel.Tool.Revision, map[bool]string{true: ", modified", false: ""}[rel.Tool.Modified])
	}
	p(", from %s to %s (UTC).\n", rel.Started, rel.Finished)
	if c := rel.Candidates; c.Registry != "" {
		p("- Candidates: the MCP Registry at `%s`", c.Registry)
		if c.UpdatedSince != "" {
			p(", servers updated since %s", c.UpdatedSince)
		}
		p(".\n")
	} else {
		p("- Candidates: `%s` (SHA-256 `%s`).\n", c.File, c.SHA256)
	}
	o := rel.Options
	p("- Options: concurrency %d, %d per host, timeout %s, at most %d tools, %d bytes and %d pages per server, %d bytes in flight, private addresses %s.\n",
		o.Concurrency, o.PerHost, o.Timeout, o.MaxTools, o.MaxBytes, o.MaxPages, o.MaxMemory, map[bool]string{true: "allowed", false: "refused"}[o.AllowPrivate])
	p("- Client: protocol %s, clientInfo `%s`, capabilities `%s`.\n", rel.Client.ProtocolVersion, compactRaw(rel.Client.ClientInfo), compactRaw(rel.Client.Capabilities))
	n := rel.Counts
	p("- Counts: %d candidates, %d servers: %d reachable with %d tools, %d unreachable", n.Candidates, n.Servers, n.Reachable, n.Tools, n.Unreachable)
	if len(n.UnreachableByKind) > 0 {
		p(" (")
		for i, k := range slices.Sorted(maps.Keys(n.UnreachableByKind)) {
			if i > 0 {
				p(", ")
			}
			p("%s %d", k, n.UnreachableByKind[k])
		}
		p(")")
	}
	p(".\n")
}

func compactRaw(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// KindCounts are the unreachable counts in error_kind order, for the page.
func (c ReleaseCounts) KindCounts() []KindCount {
	out := make([]KindCount, 0, len(c.UnreachableByKind))
	for _, k := range slices.Sorted(maps.Keys(c.UnreachableByKind)) {
		out = append(out, KindCount{k, c.UnreachableByKind[k]})
	}
	return out
}

// KindCount is one error_kind and its count.
type KindCount struct {
	Kind  string
	Count int
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
<tr><th>Options</th><td>concurrency {{.Options.Concurrency}}, {{.Options.PerHost}} per host, timeout {{.Options.Timeout}}, at most {{.Options.MaxTools}} tools, {{num .Options.MaxBytes}} bytes and {{.Options.MaxPages}} pages per server, {{num .Options.MaxMemory}} bytes in flight, private addresses {{if .Options.AllowPrivate}}allowed{{else}}refused{{end}}</td></tr>
<tr><th>Client</th><td>protocol {{.Client.ProtocolVersion}}, clientInfo <code>{{compactRaw .Client.ClientInfo}}</code>, capabilities <code>{{compactRaw .Client.Capabilities}}</code></td></tr>
<tr><th>Counts</th><td>{{.Counts.Candidates}} candidates, {{.Counts.Servers}} servers: {{.Counts.Reachable}} reachable with {{.Counts.Tools}} tools, {{.Counts.Unreachable}} unreachable{{with .Counts.KindCounts}} ({{range $i, $k := .}}{{if $i}}, {{end}}{{$k.Kind}} {{$k.Count}}{{end}}){{end}}</td></tr>
</tbody>
</table>
{{end}}`
