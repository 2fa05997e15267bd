package report

import (
	"bytes"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"strings"
	"testing"
)

func TestDiffSaysOptionsDiffer(t *testing.T) {
	rel := func(timeout string, caps string) *release.Release {
		return &release.Release{Options: release.Options{Concurrency: 32, PerHost: 2, Timeout: timeout, MaxTools: 20000},
			Client: release.Client{ProtocolVersion: "2025-06-18", Capabilities: []byte(caps)}}
	}
	cases := []struct {
		name     string
		old, new *release.Release
		want     []string
	}{
		{"same", rel("30s", `{}`), rel("30s", `{}`), nil},
		{"timeout", rel("30s", `{}`), rel("10s", `{}`), []string{"timeout: 30s → 10s"}},
		{"capabilities", rel("30s", `{}`), rel("30s", `{"roots":{}}`), []string{`client capabilities: {} → {"roots":{}}`}},
		{"one not a release", nil, rel("10s", `{}`), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Diff(&Report{Release: c.old}, &Report{Release: c.new})
			if strings.Join(d.OptionsDiffer, "|") != strings.Join(c.want, "|") {
				t.Fatalf("%q, want %q", d.OptionsDiffer, c.want)
			}
			var md bytes.Buffer
			d.WriteMarkdown(&md)
			if got := strings.Contains(md.String(), "Crawled with different options"); got != (len(c.want) > 0) {
				t.Errorf("markdown note shown %v:\n%s", got, md.String())
			}
		})
	}
}
