package report

import (
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
	checkCountSection(t, func(c *release.Counts, on bool) {
		c.ByProtocol = nil
		if on {
			c.ByProtocol = counts
		}
	}, map[string][]string{
		"json":     {`"by_protocol"`, `"protocol_version": "2026-07-28"`, `"generation": "stateless"`, `"servers": 5`},
		"markdown": {"### Protocol versions", "| 2026-07-28 | stateless | 2 |", "| 2025-11-25 | session | 5 |"},
		"html":     {`<table id="protocols">`, "<tr><td>2026-07-28</td><td>stateless</td><td>2</td></tr>", "<tr><td>2025-11-25</td><td>session</td><td>5</td></tr>"},
	}, []string{"2026-07-28"})
}
