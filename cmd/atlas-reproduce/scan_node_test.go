package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestScanNodeSDKServers: scan reaches a TypeScript SDK v2 server that
// rejects every revision but 2026-07-28, and a 1.x one with sessions,
// labels every tool the SDK's own client lists, in its order, and says
// which revision it negotiated.
func TestScanNodeSDKServers(t *testing.T) {
	testenv.NodePackages(t) // skips without them, fails with CI=true
	sent, err := probe.Declared(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, client, said string
		script             []string
	}{
		{"TypeScript SDK v2, 2026-07-28 only", "v2", "(protocol 2026-07-28, stateless)", []string{"ts2-server.mjs", "reject"}},
		{"TypeScript SDK 1.x", "v1", "(protocol 2025-11-25, session)", []string{"ts1-server.mjs"}},
	}
	urls := testenv.NodeServers(t, cases[0].script, cases[1].script)
	listed := testenv.NodeListTools(t, sent.Capabilities, testenv.NodeClient{Gen: cases[0].client, URL: urls[0]},
		testenv.NodeClient{Gen: cases[1].client, URL: urls[1]})
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, want := urls[i], listed[i]
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
