package toolid

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompareRenamesAndSchema pins three tools from a tools/list record and
// compares a later listing: one renamed (same definition, new name, its
// key order shuffled), one whose input schema alone changed, one added.
func TestCompareRenamesAndSchema(t *testing.T) {
	before := `{"server_id":"s","tools":[` +
		`{"name":"read_file","description":"read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}},` +
		`{"name":"search","description":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}]}`
	after := `{"server_id":"s","tools":[` +
		`{"inputSchema":{"properties":{"path":{"type":"string"}},"type":"object"},"description":"read a file","name":"open_file"},` +
		`{"name":"search","description":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"cmd":{"type":"string"}}}},` +
		`{"name":"fresh","description":"new","inputSchema":{"type":"object"}}]}`
	old, err := Pin("s", []byte(before))
	if err != nil {
		t.Fatal(err)
	}
	now, err := Pin("s", []byte(after))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range Compare(old, now) {
		s := c.Kind.String() + " " + ToolName(c.Tool())
		if c.Kind == Renamed {
			s += " from " + ToolName(c.Old)
		}
		if c.SchemaChanged {
			s += " schema"
		}
		got = append(got, s)
	}
	want := []string{`changed "search" schema`, `renamed "open_file" from "read_file"`, `added "fresh"`}
	if !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
	// A rename that also changes the description is no rename.
	edited := strings.Replace(after, `"description":"read a file"`, `"description":"read any file"`, 1)
	now, err = Pin("s", []byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Compare(old, now) {
		if c.Kind == Renamed {
			t.Errorf("an edited tool under a new name was taken for a rename: %+v", c)
		}
	}
}

func TestServersLockReadWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "servers.lock.json")
	if l, err := ReadPinnedServers(path); err != nil || l != nil {
		t.Fatalf("no lock yet: %v, %v", l, err)
	}
	l := NewServersLock()
	for _, id := range []string{"b", "a", "b"} {
		f := New(id)
		f.Add(Tool{Name: str("t-" + id), Definition: "d"})
		l.Put(f)
	}
	if err := l.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadPinnedServers(path)
	if err != nil || len(back.Servers) != 2 || back.Servers[0].ServerID != "a" || back.File("b") == nil || back.File("c") != nil {
		t.Fatalf("read back %+v, %v", back, err)
	}
	back.Drop("a")
	if len(back.Servers) != 1 {
		t.Errorf("drop: %+v", back.Servers)
	}
	for name, text := range map[string]string{
		"one-server lock": `{"version": 1, "server_id": "x", "tools": []}`,
		"twice":           `{"version": 1, "servers": [{"server_id": "x", "tools": []}, {"server_id": "x", "tools": []}]}`,
		"class":           `{"version": 1, "servers": [{"server_id": "x", "tools": [{"name": "t", "name_ordinal": 0, "definition_sha256": "d", "schema_sha256": null, "classes": ["nope"], "required_classes": []}]}]}`,
		"trailing":        `{"version": 1, "servers": []} x`,
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadServersLock(path); err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want one naming %s", err, path)
			}
		})
	}
	if _, err := ReadPinnedServers(filepath.Join(dir, "no", "x.json")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing folder: %v", err)
	}
}
