package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// TestPackageTypeCounts: a crawl release's servers by type and outcome
// reach report.json, report.md and report.html; a release without them
// shows no section.
func TestPackageTypeCounts(t *testing.T) {
	counts := []release.PackageTypeCount{
		{Type: "oci", Outcome: "reachable", Servers: 3},
		{Type: "pypi", Outcome: "install", Servers: 2},
	}
	for _, o := range []struct {
		name  string
		write func(*Report, *bytes.Buffer) error
		want  []string
	}{
		{"json", func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) },
			[]string{`"by_package_type"`, `"type": "oci"`, `"outcome": "install"`, `"servers": 3`}},
		{"markdown", func(r *Report, b *bytes.Buffer) error { return r.WriteMarkdown(b) },
			[]string{"### Servers by type", "| oci | reachable | 3 |", "| pypi | install | 2 |"}},
		{"html", func(r *Report, b *bytes.Buffer) error { return r.WriteHTML(b) },
			[]string{`<table id="package-types">`, "<tr><td>oci</td><td>reachable</td><td>3</td></tr>", "<tr><td>pypi</td><td>install</td><td>2</td></tr>"}},
	} {
		t.Run(o.name, func(t *testing.T) {
			r := sampleReport(true)
			r.Release = &release.Release{Client: release.Client{ClientInfo: json.RawMessage(`{}`), Capabilities: json.RawMessage(`{}`)},
				Counts: release.Counts{ByPackageType: counts}}
			var b bytes.Buffer
			if err := o.write(r, &b); err != nil {
				t.Fatal(err)
			}
			for _, w := range o.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%s lacks %q", o.name, w)
				}
			}
			r.Release.Counts.ByPackageType = nil
			b.Reset()
			if err := o.write(r, &b); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), "Servers by type") || strings.Contains(b.String(), "by_package_type") {
				t.Errorf("%s shows counts by type it was not given", o.name)
			}
		})
	}
}
