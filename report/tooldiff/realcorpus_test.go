package tooldiff_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/pipeline"
	"github.com/atlas-reproduce/atlas-reproduce/report"
	"github.com/atlas-reproduce/atlas-reproduce/report/tooldiff"
)

// member is one member of a JSON object, its value kept as written.
type member struct {
	key string
	val json.RawMessage
}

// members splits a JSON object into its members, in order.
func members(t *testing.T, obj []byte) []member {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", obj)
	}
	var out []member
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, member{k.(string), v})
	}
	return out
}

func object(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteString(", ")
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteString(": ")
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// set replaces key's value, or appends the member.
func set(ms []member, key string, val []byte) []member {
	for i := range ms {
		if ms[i].key == key {
			ms[i].val = val
			return ms
		}
	}
	return append(ms, member{key, val})
}

func get(ms []member, key string) []byte {
	for _, m := range ms {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// reversed writes obj with its keys, and those of its inputSchema, in
// reverse order: the same value.
func reversed(t *testing.T, obj []byte) []byte {
	ms := members(t, obj)
	slices.Reverse(ms)
	if s := get(ms, "inputSchema"); s != nil {
		sm := members(t, s)
		slices.Reverse(sm)
		ms = set(ms, "inputSchema", object(sm))
	}
	return object(ms)
}

// edit is one known change between the two censuses.
type edit struct {
	name   string
	apply  func(t *testing.T, tool []byte) []byte
	change string // "changed", or "" for no change
}

var edits = []edit{
	{"re-described", func(t *testing.T, tool []byte) []byte {
		return object(set(members(t, tool), "description", []byte(`"Now does something else entirely."`)))
	}, "changed"},
	{"new cmd property", func(t *testing.T, tool []byte) []byte {
		ms := members(t, tool)
		sm := members(t, get(ms, "inputSchema"))
		props := members(t, get(sm, "properties"))
		props = append(props, member{"cmd", []byte(`{"type": "string", "description": "shell command to run"}`)})
		return object(set(ms, "inputSchema", object(set(sm, "properties", object(props)))))
	}, "changed"},
	{"annotations", func(t *testing.T, tool []byte) []byte {
		return object(set(members(t, tool), "annotations", []byte(`{"destructiveHint": true, "readOnlyHint": false}`)))
	}, "changed"},
	{"keys reordered", reversed, ""},
	{"whitespace", func(t *testing.T, tool []byte) []byte {
		var b bytes.Buffer
		if err := json.Indent(&b, tool, " ", "\t "); err != nil {
			t.Fatal(err)
		}
		// One census line per server: the line breaks become spaces.
		return bytes.ReplaceAll(b.Bytes(), []byte("\n"), []byte("  "))
	}, ""},
}

// census writes a census, server i with the id srv-i (a nil server lists
// no tools), and runs it.
func census(t *testing.T, servers [][][]byte) string {
	t.Helper()
	var lines bytes.Buffer
	for i, tools := range servers {
		fmt.Fprintf(&lines, `{"server_id": "https://srv-%d.example/mcp", "tools": [%s]}`+"\n", i, bytes.Join(tools, []byte(", ")))
	}
	data := t.TempDir()
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(lines.Bytes())
	zw.Close()
	files := map[string][]byte{
		release.ToolsFile:      zb.Bytes(),
		release.ServersFile:    gzBytes(`{"server_id": "https://srv-0.example/mcp"}` + "\n"),
		release.CandidatesFile: []byte(`{"url": "https://srv-0.example/mcp"}` + "\n"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(data, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Data: data, Out: out, NoVerify: true, Workers: 2, ChunkSize: 4096}); err != nil {
		t.Fatal(err)
	}
	return out
}

func gzBytes(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

// TestRealCorpusEdits builds two censuses of real tools, the second with
// known edits, and requires the diff to find exactly those: reordered keys
// and whitespace are no change.
func TestRealCorpusEdits(t *testing.T) {
	var tools [][]byte
	for _, line := range realcorpus.Lines(t) {
		var rec struct {
			Tool json.RawMessage `json:"tool"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		// Tools whose text Go's encoding/json would alter (lone
		// surrogates) or that have no properties object to edit are left
		// out of this test; the hash test covers every tool.
		if bytes.Contains(rec.Tool, []byte(`\ud`)) || bytes.Contains(rec.Tool, []byte(`"cmd"`)) ||
			bytes.Contains(rec.Tool, []byte(`"annotations"`)) {
			continue
		}
		if ms := members(t, rec.Tool); !strings.HasPrefix(string(get(members(t, get(ms, "inputSchema")), "properties")), "{") {
			continue
		}
		tools = append(tools, rec.Tool)
		if len(tools) == 200 {
			break
		}
	}
	const perServer = 5
	var oldServers, newServers [][][]byte
	for i := 0; i < len(tools); i += perServer {
		oldServers = append(oldServers, slices.Clone(tools[i:i+perServer]))
		newServers = append(newServers, slices.Clone(tools[i:i+perServer]))
	}
	// Server 3 loses its tool 2; server 5 gains a tool of server 7.
	removed := newServers[3][2]
	newServers[3] = slices.Delete(newServers[3], 2, 3)
	newServers[5] = append(newServers[5], tools[7*perServer])
	// Servers 10, 12, ... get one edit each, on their tool 1.
	type where struct{ server, tool int }
	var wantChanged []where
	for i, e := range edits {
		s := 10 + 2*i
		newServers[s][1] = e.apply(t, newServers[s][1])
		if e.change == "changed" {
			wantChanged = append(wantChanged, where{s, 1})
		}
	}
	// The last server lists no tools any more, and a new one appears.
	goneServer := len(newServers) - 1
	newServers[goneServer] = nil
	newServers = append(newServers, [][]byte{tools[0]})

	oldDir, newDir := census(t, oldServers), census(t, newServers)
	d, err := tooldiff.Compare(context.Background(), oldDir, newDir, tooldiff.Options{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	serverID := func(i int) string { return fmt.Sprintf("https://srv-%d.example/mcp", i) }
	type id struct {
		server string
		tool   string
	}
	name := func(tool []byte) string {
		var v struct{ Name string }
		json.Unmarshal(tool, &v)
		return v.Name
	}
	ids := func(cs []report.ToolChange) []id {
		var out []id
		for _, c := range cs {
			out = append(out, id{*c.ServerID, *c.Tool})
		}
		return out
	}
	// The tool that gained a class is listed first, then the rest in file
	// order.
	var want []id
	for _, i := range []int{1, 0, 2} {
		w := wantChanged[i]
		want = append(want, id{serverID(w.server), name(oldServers[w.server][w.tool])})
	}
	if got := ids(d.First.Changed); !slices.Equal(got, want) {
		t.Errorf("changed %v, want %v", got, want)
	}
	wantAdded := []id{{serverID(5), name(tools[7*perServer])}, {serverID(len(newServers) - 1), name(tools[0])}}
	if got := ids(d.First.Added); !slices.Equal(got, wantAdded) {
		t.Errorf("added %v, want %v", got, wantAdded)
	}
	wantRemoved := []id{{serverID(3), name(removed)}}
	for _, tl := range oldServers[goneServer] {
		wantRemoved = append(wantRemoved, id{serverID(goneServer), name(tl)})
	}
	if got := ids(d.First.Removed); !slices.Equal(got, wantRemoved) {
		t.Errorf("removed %v, want %v", got, wantRemoved)
	}
	total := int64(len(tools))
	wantCounts := report.ToolCounts{Added: 2, Removed: int64(len(wantRemoved)), Changed: int64(len(wantChanged))}
	wantCounts.Unchanged = total - wantCounts.Removed - wantCounts.Changed
	if d.Tools != wantCounts {
		t.Errorf("tools %+v, want %+v", d.Tools, wantCounts)
	}
	if d.Servers.Added != 1 || d.Servers.Removed != 1 {
		t.Errorf("servers %+v", d.Servers)
	}
	// The new cmd property gives its tool gg:command-string.
	cmdTool := d.First.Changed[0]
	if !slices.Contains(cmdTool.ClassesGained, "gg:command-string") {
		t.Errorf("the tool given a cmd property gained %v", cmdTool.ClassesGained)
	}
	for _, c := range []report.ToolChange{d.First.Changed[1], d.First.Changed[2]} {
		if len(c.ClassesGained)+len(c.ClassesLost) != 0 {
			t.Errorf("%s: classes changed: %+v", *c.Tool, c)
		}
	}
	// What each side's totals say agrees with what the tools gained and lost.
	oldR, newR := readReport(t, oldDir), readReport(t, newDir)
	for _, cid := range report.ClassOrder() {
		if got, want := d.ClassesGained[cid]-d.ClassesLost[cid], newR.Classes[cid].Tools-oldR.Classes[cid].Tools; got != want {
			t.Errorf("%s: gained - lost = %d, the totals changed by %d", cid, got, want)
		}
	}
}

func readReport(t *testing.T, dir string) *report.Report {
	f, err := os.Open(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := report.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
