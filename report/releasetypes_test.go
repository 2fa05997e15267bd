package report

import (
	"encoding/json"
	"testing"
)

// TestReleaseNameable: a caller outside the module builds a Report's
// Release from this package's names alone, and it encodes as release.json.
func TestReleaseNameable(t *testing.T) {
	r := Report{Release: &Release{
		Tool:    ReleaseTool{Name: "atlas-reproduce", Version: "v1"},
		Options: ReleaseOptions{Concurrency: 4},
		Counts:  ReleaseCounts{ByProtocol: []ProtocolCount{{ProtocolVersion: "2025-06-18"}}},
	}}
	b, err := json.Marshal(r.Release)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if tool, _ := back["tool"].(map[string]any); tool["name"] != "atlas-reproduce" {
		t.Errorf("release.json %s lacks the tool's name", b)
	}
}
