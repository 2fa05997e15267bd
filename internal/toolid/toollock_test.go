package toolid

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func str(s string) *string { return &s }

func TestCompare(t *testing.T) {
	old, new := New("s"), New("s")
	for _, tl := range []Tool{
		{Name: str("a"), Definition: "1", Classes: []string{"gg:url-endpoint"}},
		{Name: str("a"), Definition: "2"},
		{Name: str("b"), Definition: "3"},
		{Name: nil, Definition: "4"},
	} {
		old.Add(tl)
	}
	for _, tl := range []Tool{
		{Name: nil, Definition: "4"}, // unchanged, moved
		{Name: str("a"), Definition: "1", Classes: []string{"gg:url-endpoint"}}, // unchanged
		{Name: str("a"), Definition: "2b", Classes: []string{"gg:command-string"}},
		{Name: str("a"), Definition: "5"}, // a third "a" appears
	} {
		new.Add(tl)
	}
	var got []string
	for _, c := range Compare(old, new) {
		tl := c.Tool()
		got = append(got, c.Kind.String()+" "+*tl.Name+"#"+string(rune('0'+tl.NameOrdinal))+" +"+strings.Join(c.ClassesGained, ","))
	}
	want := []string{"changed a#1 +gg:command-string", "added a#2 +", "removed b#0 +"}
	if !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
}

func TestReadWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lock.json")
	f := New("https://x.example/mcp")
	f.Add(Tool{Name: str("a"), Definition: "ab"})
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	g, err := Read(path)
	if err != nil || g.ServerID != f.ServerID || len(g.Tools) != 1 || *g.Tools[0].Name != "a" {
		t.Fatalf("read back %+v, %v", g, err)
	}
	for name, text := range map[string]string{
		"version":  `{"version": 2, "server_id": "x", "tools": []}`,
		"unknown":  `{"version": 1, "server_id": "x", "tools": [], "extra": 1}`,
		"not json": `tools`,
	} {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(path, []byte(text), 0o644)
			if _, err := Read(path); err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want one naming %s", err, path)
			}
		})
	}
}
