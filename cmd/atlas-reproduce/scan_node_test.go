package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/crawl"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestScanNodeSDKServers: scan reaches a TypeScript SDK v2 server that
// rejects every revision but 2026-07-28, and a 1.x one with sessions,
// labels every tool the SDK's own client lists, in its order, and says
// which revision it negotiated.
func TestScanNodeSDKServers(t *testing.T) {
	testenv.NodePackages(t) // skips without them, fails with CI=true
	sent, err := crawl.Declared(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, script, arg, client, said string
	}{
		{"TypeScript SDK v2, 2026-07-28 only", "ts2-server.mjs", "reject", "v2", "(protocol 2026-07-28, stateless)"},
		{"TypeScript SDK 1.x", "ts1-server.mjs", "", "v1", "(protocol 2025-11-25, session)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := testenv.NodeServer(t, c.script, c.arg)
			want := testenv.NodeListTools(t, c.client, url, sent.Capabilities)
			stdout, stderr, code := run(t, "", "scan", url)
			if code != 0 || !strings.Contains(stderr, c.said) {
				t.Fatalf("scan: exit %d, want 0 and %q in\n%s", code, c.said, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			if len(lines) != len(want.Tools) {
				t.Fatalf("%d labelled tools, the SDK's client lists %d", len(lines), len(want.Tools))
			}
			for i, l := range lines {
				var got, exp struct {
					Tool string `json:"tool"`
					Name string `json:"name"`
				}
				if json.Unmarshal([]byte(l), &got) != nil || json.Unmarshal(want.Tools[i], &exp) != nil || got.Tool != exp.Name {
					t.Errorf("line %d: %s, want tool %q", i, l, exp.Name)
				}
			}
		})
	}
}
