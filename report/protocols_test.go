package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
)

// TestProtocolCounts: a crawl release's servers per protocol version and
// generation reach report.json, report.md and report.html; a data folder
// without them shows no section.
func TestProtocolCounts(t *testing.T) {
	counts := []release.ProtocolCount{
		{ProtocolVersion: "2026-07-28", Generation: "stateless", Servers: 2},
		{ProtocolVersion: "2025-11-25", Generation: "session", Servers: 5},
	}
	outputs := []struct {
		name  string
		write func(*Report, *bytes.Buffer) error
		want  []string
	}{
		{"json", func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) },
			[]string{`"by_protocol"`, `"protocol_version": "2026-07-28"`, `"generation": "stateless"`, `"servers": 5`}},
		{"markdown", func(r *Report, b *bytes.Buffer) error { return r.WriteMarkdown(b) },
			[]string{"### Protocol versions", "| 2026-07-28 | stateless | 2 |", "| 2025-11-25 | session | 5 |"}},
		{"html", func(r *Report, b *bytes.Buffer) error { return r.WriteHTML(b) },
			[]string{`<table id="protocols">`, "<tr><td>2026-07-28</td><td>stateless</td><td>2</td></tr>", "<tr><td>2025-11-25</td><td>session</td><td>5</td></tr>"}},
	}
	for _, o := range outputs {
		t.Run(o.name, func(t *testing.T) {
			r := sampleReport(true)
			r.Release = &release.Release{Client: release.Client{ClientInfo: json.RawMessage(`{}`), Capabilities: json.RawMessage(`{}`)},
				Counts: release.Counts{ByProtocol: counts}}
			var b bytes.Buffer
			if err := o.write(r, &b); err != nil {
				t.Fatal(err)
			}
			for _, w := range o.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%s lacks %q", o.name, w)
				}
			}
			r.Release.Counts.ByProtocol = nil
			b.Reset()
			if err := o.write(r, &b); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), "2026-07-28") {
				t.Errorf("%s shows protocol counts it was not given", o.name)
			}
		})
	}
}
