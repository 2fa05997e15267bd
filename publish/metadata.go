package publish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// metadata makes a deposit's .zenodo.json and CITATION.cff.
type metadata struct {
	opt  Options
	date string
	rep  *report.Report
	zip  string
	rel  *release.Release
}

// Zenodo is the metadata of a deposition, in the legacy deposition API's
// form (the one .zenodo.json files use).
type Zenodo struct {
	UploadType         string              `json:"upload_type"`
	Title              string              `json:"title"`
	Creators           []Creator           `json:"creators"`
	Description        string              `json:"description"`
	Version            string              `json:"version"`
	PublicationDate    string              `json:"publication_date"`
	License            string              `json:"license"`
	AccessRight        string              `json:"access_right"`
	Keywords           []string            `json:"keywords"`
	RelatedIdentifiers []RelatedIdentifier `json:"related_identifiers"`
}

// Creator is one author of a record.
type Creator struct {
	Name string `json:"name"`
}

// RelatedIdentifier links a record to another work.
type RelatedIdentifier struct {
	Identifier   string `json:"identifier"`
	Relation     string `json:"relation"`
	ResourceType string `json:"resource_type,omitempty"`
}

func (m metadata) title() string {
	if m.opt.Title != "" {
		return m.opt.Title
	}
	return "MCP Atlas census release " + m.date + ": MCP server tools with the gg: parameter risk classes"
}

func (m metadata) zenodoJSON() ([]byte, error) {
	z := Zenodo{
		UploadType:      "dataset",
		Title:           m.title(),
		Description:     m.description(),
		Version:         m.opt.Version,
		PublicationDate: m.opt.PublicationDate,
		License:         m.opt.License,
		AccessRight:     "open",
		Keywords:        []string{"Model Context Protocol", "MCP", "census", "tool schemas", "parameter risk classes"},
		RelatedIdentifiers: []RelatedIdentifier{
			{Identifier: SnapshotDOI, Relation: "continues", ResourceType: "dataset"},
			{Identifier: SuiteDOI, Relation: "references", ResourceType: "software"},
		},
	}
	for _, c := range m.opt.Creators {
		z.Creators = append(z.Creators, Creator{Name: c})
	}
	if m.opt.PreviousDOI != "" {
		z.RelatedIdentifiers = append(z.RelatedIdentifiers, RelatedIdentifier{Identifier: m.opt.PreviousDOI, Relation: "isNewVersionOf", ResourceType: "dataset"})
	}
	// The description is HTML: kept readable, not \u003c-escaped.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(z)
	return buf.Bytes(), err
}

// description is the record's description (Zenodo takes HTML): what the
// census is, its counts, and the class table.
func (m metadata) description() string {
	var b strings.Builder
	e := html.EscapeString
	fmt.Fprintf(&b, "<p>A census of MCP servers and their tools, dated %s: %d tools on %d servers, each tool input schema labelled with the five gg: parameter risk classes. ", e(m.date), m.rep.Tools, m.rep.Servers)
	fmt.Fprintf(&b, "%s holds the census files in the layout of the frozen 2026-10-12 snapshot (%s); SHA256SUMS pins them. report.json and classes.parquet are the published table: <code>atlas-reproduce reproduce --record ID</code> verifies the files and holds a new run to it.</p>", e(m.zip), e(SnapshotDOI))
	if m.rel != nil {
		from := m.rel.Candidates.Registry
		if from == "" {
			from = m.rel.Candidates.File
		}
		fmt.Fprintf(&b, "<p>Crawled from %s, %s to %s, by %s %s.</p>", e(from), e(m.rel.Started), e(m.rel.Finished), e(m.rel.Tool.Name), e(m.rel.Tool.Version))
	}
	b.WriteString("<table><thead><tr><th>class</th><th>tools</th><th>%</th><th>required</th></tr></thead><tbody>")
	for _, id := range m.rep.ClassOrder {
		c := m.rep.Classes[id]
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%.3f</td><td>%d</td></tr>", e(id), c.Tools, c.Percent, c.Required)
	}
	b.WriteString("</tbody></table>")
	if len(m.rep.Buckets) > 0 {
		b.WriteString("<p>Non-normative buckets: ")
		for i, id := range slices.Sorted(maps.Keys(m.rep.Buckets)) {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %d", e(id), m.rep.Buckets[id].Tools)
		}
		b.WriteString(".</p>")
	}
	return b.String()
}

// citation is CITATION.cff for the release.
func (m metadata) citation() []byte {
	var b strings.Builder
	q := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	b.WriteString("cff-version: 1.2.0\n")
	b.WriteString("message: \"If you use this census release, please cite it as below.\"\n")
	b.WriteString("type: dataset\n")
	fmt.Fprintf(&b, "title: %s\n", q(m.title()))
	fmt.Fprintf(&b, "version: %s\n", q(m.opt.Version))
	fmt.Fprintf(&b, "date-released: %s\n", q(m.opt.PublicationDate))
	fmt.Fprintf(&b, "license: %s\n", q(spdx(m.opt.License)))
	b.WriteString("authors:\n")
	for _, c := range m.opt.Creators {
		if family, given, ok := strings.Cut(c, ","); ok {
			fmt.Fprintf(&b, "  - family-names: %s\n    given-names: %s\n", q(strings.TrimSpace(family)), q(strings.TrimSpace(given)))
		} else {
			fmt.Fprintf(&b, "  - name: %s\n", q(c))
		}
	}
	b.WriteString("keywords:\n  - \"Model Context Protocol\"\n  - census\n  - \"parameter risk classes\"\n")
	b.WriteString("references:\n")
	fmt.Fprintf(&b, "  - type: dataset\n    title: \"MCP Atlas census snapshot 2026-10-12\"\n    doi: %s\n    authors:\n      - name: \"MCP Atlas\"\n", q(SnapshotDOI))
	if m.opt.PreviousDOI != "" {
		fmt.Fprintf(&b, "  - type: dataset\n    title: \"previous census release\"\n    doi: %s\n    authors:\n      - name: \"MCP Atlas\"\n", q(m.opt.PreviousDOI))
	}
	return []byte(b.String())
}

// spdx maps Zenodo's license ids to SPDX ones where they differ in case.
func spdx(license string) string {
	switch strings.ToLower(license) {
	case "cc-by-4.0":
		return "CC-BY-4.0"
	case "cc0-1.0":
		return "CC0-1.0"
	case "cc-by-sa-4.0":
		return "CC-BY-SA-4.0"
	case "odc-by-1.0":
		return "ODC-By-1.0"
	}
	return license
}
