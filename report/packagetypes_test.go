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
	checkCountSection(t, func(c *release.Counts, on bool) {
		c.ByPackageType = nil
		if on {
			c.ByPackageType = counts
		}
	}, map[string][]string{
		"json":     {`"by_package_type"`, `"type": "oci"`, `"outcome": "install"`, `"servers": 3`},
		"markdown": {"### Servers by type", "| oci | reachable | 3 |", "| pypi | install | 2 |"},
		"html":     {`<table id="package-types">`, "<tr><td>oci</td><td>reachable</td><td>3</td></tr>", "<tr><td>pypi</td><td>install</td><td>2</td></tr>"},
	}, []string{"Servers by type", "by_package_type"})
}

// checkCountSection writes a report whose crawl release holds one kind
// of counts (set with on) in each output, which must hold its want
// strings; then, the counts taken away (set without on), none of the
// absent strings.
func checkCountSection(t *testing.T, set func(c *release.Counts, on bool), want map[string][]string, absent []string) {
	t.Helper()
	for _, o := range []struct {
		name  string
		write func(*Report, *bytes.Buffer) error
	}{
		{"json", func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) }},
		{"markdown", func(r *Report, b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
		{"html", func(r *Report, b *bytes.Buffer) error { return r.WriteHTML(b) }},
	} {
		t.Run(o.name, func(t *testing.T) {
			r := sampleReport(true)
			r.Release = &release.Release{Client: release.Client{ClientInfo: json.RawMessage(`{}`), Capabilities: json.RawMessage(`{}`)}}
			set(&r.Release.Counts, true)
			var b bytes.Buffer
			if err := o.write(r, &b); err != nil {
				t.Fatal(err)
			}
			for _, w := range want[o.name] {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%s lacks %q", o.name, w)
				}
			}
			set(&r.Release.Counts, false)
			b.Reset()
			if err := o.write(r, &b); err != nil {
				t.Fatal(err)
			}
			for _, a := range absent {
				if strings.Contains(b.String(), a) {
					t.Errorf("%s shows %q, counts it was not given", o.name, a)
				}
			}
		})
	}
}
