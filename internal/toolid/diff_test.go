package toolid

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

func TestChangeKindText(t *testing.T) {
	for _, tc := range []struct {
		k    ChangeKind
		text string
	}{{Unchanged, "unchanged"}, {Added, "added"}, {Removed, "removed"}, {Changed, "changed"}} {
		b, err := json.Marshal(struct {
			K ChangeKind `json:"k"`
		}{tc.k})
		if err != nil || string(b) != `{"k":"`+tc.text+`"}` || tc.k.String() != tc.text {
			t.Errorf("%d: %s %v, String %q; want %q", tc.k, b, err, tc.k, tc.text)
		}
		var back ChangeKind
		if err := back.UnmarshalText([]byte(tc.text)); err != nil || back != tc.k {
			t.Errorf("UnmarshalText(%q) = %d, %v", tc.text, back, err)
		}
	}
	if _, err := json.Marshal(ChangeKind(9)); err == nil {
		t.Error("an unknown kind marshalled")
	}
	var k ChangeKind
	if err := k.UnmarshalText([]byte("moved")); err == nil {
		t.Error(`"moved" read as a kind`)
	}
}

func TestGainedLost(t *testing.T) {
	const url, cmd, cred = classify.URLEndpoint, classify.CommandString, classify.CredentialValue
	for _, tc := range []struct {
		old, new, gained, lost classify.Set
	}{
		{0, url | cmd, url | cmd, 0},                // added
		{url | cmd, 0, 0, url | cmd},                // removed
		{url | cred, url | cmd, cmd, cred},          // changed
		{url, url, 0, 0},                            // unchanged
		{classify.RawContentBlob, url, url, 0},      // buckets are no classes
		{url, url | classify.AccountIdentity, 0, 0}, // nor here
	} {
		g, l := GainedLost(tc.old, tc.new)
		if g != tc.gained || l != tc.lost {
			t.Errorf("GainedLost(%v, %v) = %v, %v; want %v, %v", tc.old.IDs(allSets), tc.new.IDs(allSets), g.IDs(allSets), l.IDs(allSets), tc.gained.IDs(allSets), tc.lost.IDs(allSets))
		}
	}
}

const allSets = classify.Classes | classify.Buckets

// TestKeyerDigest: the digest tells apart what a Key tells apart (null
// from empty, a server id from a name, a boundary shifted between them).
func TestKeyerDigest(t *testing.T) {
	k := NewKeyer()
	type pair struct {
		server    string
		hasServer bool
		name      string
		hasName   bool
	}
	pairs := []pair{
		{"s", true, "a", true}, {"", false, "a", true}, {"", true, "a", true},
		{"s", true, "", false}, {"s", true, "", true}, {"sa", true, "", true}, {"", true, "sa", true},
		{"a", true, "s", true}, {"", false, "", false},
	}
	seen := map[Digest]pair{}
	for _, p := range pairs {
		d := k.Digest([]byte(p.server), p.hasServer, []byte(p.name), p.hasName)
		if q, ok := seen[d]; ok {
			t.Errorf("%+v and %+v share a digest", p, q)
		}
		seen[d] = p
		if again := k.Digest([]byte(p.server), p.hasServer, []byte(p.name), p.hasName); again != d {
			t.Errorf("%+v: digest not stable", p)
		}
	}
}

// TestPinOrCompare pins a record's tools, finds them unchanged, then finds
// what changed; the lock labels each tool itself, so a record whose tools
// a second decoder might order differently still pairs each tool with its
// own labels.
// pinOrCompare is a scan's two lock steps: ReadPinned, then PinOrCompare.
func pinOrCompare(t *testing.T, path, serverID string, doc []byte) (*Outcome, error) {
	t.Helper()
	pinned, err := ReadPinned(path)
	if err != nil {
		return nil, err
	}
	return PinOrCompare(path, pinned, serverID, doc)
}

func TestPinOrCompare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock.json")
	v1 := `{"server_id": "s", "tools": [
		{"name": "run", "inputSchema": {"properties": {"query": {}}}},
		{"name": "read", "inputSchema": {"properties": {"file_path": {}}, "required": ["file_path"]}},
		{"name": "gone"}]}`
	v2 := `{"server_id": "s", "tools": [
		{"name": "read", "inputSchema": {"properties": {"file_path": {}}, "required": ["file_path"]}},
		{"name": "run", "inputSchema": {"properties": {"query": {}, "cmd": {"description": "shell command"}}}},
		{"name": "fresh", "inputSchema": {"properties": {"api_key": {}}}}]}`
	o, err := pinOrCompare(t, path, "s", []byte(v1))
	if err != nil || !o.Wrote || len(o.Now.Tools) != 3 {
		t.Fatalf("first: %+v, %v", o, err)
	}
	if got := o.Now.Tools[1]; *got.Name != "read" || !slices.Equal(got.Classes, []string{"gg:filesystem-path"}) || !slices.Equal(got.RequiredClasses, []string{"gg:filesystem-path"}) {
		t.Errorf("read pinned as %+v", got)
	}
	before, _ := os.ReadFile(path)
	if o, err = pinOrCompare(t, path, "s", []byte(v1)); err != nil || o.Wrote || len(o.Changes) != 0 {
		t.Fatalf("same tools: %+v, %v", o, err)
	}
	if o, err = pinOrCompare(t, path, "s", []byte(v2)); err != nil || o.Wrote {
		t.Fatalf("changed tools: %+v, %v", o, err)
	}
	var got []string
	for _, c := range o.Changes {
		got = append(got, c.Kind.String()+" "+*c.Tool().Name+" +"+strings.Join(c.ClassesGained, ",")+" -"+strings.Join(c.ClassesLost, ","))
	}
	want := []string{"changed run +gg:command-string -", "added fresh +gg:credential-value -", "removed gone + -"}
	if !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("comparing rewrote the lock file")
	}
	if _, err := pinOrCompare(t, path, "s", []byte(`{"tools": 3}`)); err == nil {
		t.Error("a bad record was pinned or compared")
	}
	os.WriteFile(path, []byte(`{"version": 1, "server_id": "s", "tools": [{"name": "a", "name_ordinal": 0, "definition_sha256": "00", "schema_sha256": null, "classes": ["gg:nope"], "required_classes": []}]}`), 0o644)
	if _, err := pinOrCompare(t, path, "s", []byte(v1)); err == nil || !strings.Contains(err.Error(), `"gg:nope" is not a class`) {
		t.Errorf("a lock naming an unknown class: %v", err)
	}
}
