package tooldiff

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// tool is one row of a hand-made tools.parquet.
type tool struct {
	server, name string // "" is a null
	def          string // hashed to the definition hash
	labels, req  classify.Set
}

func writeRun(t *testing.T, tools []tool) string {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	w, err := tables.NewToolsWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var b tables.ToolsBatch
	seen := map[[2]string]int64{}
	for i, tl := range tools {
		b.NameOrdinal = append(b.NameOrdinal, seen[[2]string{tl.server, tl.name}])
		seen[[2]string{tl.server, tl.name}]++
		b.AppendServerID([]byte(tl.server), tl.server != "")
		b.Name.AppendNullable([]byte(tl.name), tl.name != "")
		b.Line = append(b.Line, int64(i+1))
		b.Properties = append(b.Properties, 0)
		b.Labels = append(b.Labels, tl.labels)
		b.Required = append(b.Required, tl.req)
		b.CamelCase, b.WordSplit, b.Deep = append(b.CamelCase, 0), append(b.WordSplit, 0), append(b.Deep, 0)
		b.Definition = append(b.Definition, sha256.Sum256([]byte(tl.def)))
		b.Schema = append(b.Schema, tables.Hash{})
		b.HasSchema = append(b.HasSchema, false)
	}
	if err := w.Append(&b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.parquet"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const (
	cmd  = classify.CommandString
	cred = classify.CredentialValue
	url  = classify.URLEndpoint
)

func TestCompare(t *testing.T) {
	old := []tool{
		{"s1", "run", "run v1", cmd, cmd},
		{"s1", "dup", "dup a", 0, 0},
		{"s1", "dup", "dup b", url, 0},
		{"s1", "gone", "gone", cred, cred},
		{"s2", "same", "same", url, url},
		{"s3", "only", "only old", 0, 0}, // s3 vanishes
		{"", "anon", "anon", 0, 0},
	}
	new := []tool{
		{"s2", "same", "same", url, url},          // unchanged, moved in the file
		{"s1", "dup", "dup a", 0, 0},              // first dup unchanged
		{"s1", "run", "run v2", cmd | cred, cred}, // changed: gained cred, required cmd -> cred
		{"s1", "dup", "dup b2", 0, 0},             // second dup changed: lost url
		{"s1", "dup", "dup c", cmd, 0},            // third dup added
		{"s4", "fresh", "fresh", cmd | url, cmd},  // s4 appears
		{"", "anon", "anon", 0, 0},                // null server unchanged
	}
	var changes bytes.Buffer
	d, err := Compare(context.Background(), writeRun(t, old), writeRun(t, new), Options{Changes: &changes})
	if err != nil {
		t.Fatal(err)
	}
	if want := (report.ToolCounts{Added: 2, Removed: 2, Changed: 2, Unchanged: 3}); d.Tools != want {
		t.Errorf("tools %+v, want %+v", d.Tools, want)
	}
	if d.Servers.Added != 1 || d.Servers.Removed != 1 || !slices.Equal(d.First.ServersAdded, []string{"s4"}) || !slices.Equal(d.First.ServersRemoved, []string{"s3"}) {
		t.Errorf("servers %+v, first %v %v", d.Servers, d.First.ServersAdded, d.First.ServersRemoved)
	}
	// Gained: run +cred, dup c +cmd, fresh +cmd +url. Lost: dup b -url,
	// gone -cred.
	wantGained := map[string]int64{"gg:credential-value": 1, "gg:command-string": 2, "gg:url-endpoint": 1}
	wantLost := map[string]int64{"gg:url-endpoint": 1, "gg:credential-value": 1}
	for _, id := range report.ClassOrder() {
		if d.ClassesGained[id] != wantGained[id] || d.ClassesLost[id] != wantLost[id] {
			t.Errorf("%s: gained %d lost %d, want %d %d", id, d.ClassesGained[id], d.ClassesLost[id], wantGained[id], wantLost[id])
		}
	}
	// Required: run cmd -> cred (cred gained, cmd lost), fresh +cmd, gone -cred.
	if d.RequiredGained["gg:credential-value"] != 1 || d.RequiredGained["gg:command-string"] != 1 ||
		d.RequiredLost["gg:command-string"] != 1 || d.RequiredLost["gg:credential-value"] != 1 {
		t.Errorf("required gained %v lost %v", d.RequiredGained, d.RequiredLost)
	}
	type id struct {
		change, server, name string
		ord                  int64
	}
	var got []id
	for _, list := range [][]report.ToolChange{d.First.Added, d.First.Removed, d.First.Changed} {
		for _, c := range list {
			got = append(got, id{c.Change.String(), strOr(c.ServerID), strOr(c.Tool), c.NameOrdinal})
		}
	}
	want := []id{{"added", "s1", "dup", 2}, {"added", "s4", "fresh", 0}, {"removed", "s1", "gone", 0}, {"removed", "s3", "only", 0},
		{"changed", "s1", "run", 0}, {"changed", "s1", "dup", 1}}
	if !slices.Equal(got, want) {
		t.Errorf("changes %v, want %v", got, want)
	}
	if c := d.First.Changed[0]; !slices.Equal(c.ClassesGained, []string{"gg:credential-value"}) || !slices.Equal(c.RequiredLost, []string{"gg:command-string"}) {
		t.Errorf("run: %+v", c)
	}

	// changes.parquet holds the same rows, with both sides' ordinals.
	rows := readChanges(t, changes.Bytes())
	wantRows := [][]any{
		{"changed", "s1", "run", int64(0), int64(0), int64(2)},
		{"changed", "s1", "dup", int64(1), int64(2), int64(3)},
		{"added", "s1", "dup", int64(2), nil, int64(4)},
		{"added", "s4", "fresh", int64(0), nil, int64(5)},
		{"removed", "s1", "gone", int64(0), int64(3), nil},
		{"removed", "s3", "only", int64(0), int64(5), nil},
	}
	if len(rows) != len(wantRows) {
		t.Fatalf("changes.parquet: %d rows, want %d: %v", len(rows), len(wantRows), rows)
	}
	for i := range rows {
		if !slices.Equal(rows[i], wantRows[i]) {
			t.Errorf("changes.parquet row %d = %v, want %v", i, rows[i], wantRows[i])
		}
	}
}

func strOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// readChanges reads change, server_id, tool, name_ordinal, old_ordinal and
// new_ordinal of each row.
func readChanges(t *testing.T, data []byte) [][]any {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var rows [][]any
	for c := range 6 {
		r := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for i := range chunk.Len() {
				if c == 0 {
					rows = append(rows, make([]any, 6))
				}
				if !chunk.IsNull(i) {
					switch a := chunk.(type) {
					case *array.String:
						rows[r][c] = a.Value(i)
					case *array.Int64:
						rows[r][c] = a.Value(i)
					}
				}
				r++
			}
		}
	}
	return rows
}

// TestCompareListsGainedFirst: the lists show the tools that gained a
// class first, each part in file order, however many unremarkable changes
// come before them; changes.parquet keeps file order.
func TestCompareListsGainedFirst(t *testing.T) {
	var old, new []tool
	for i := range 6 {
		n := fmt.Sprint("t", i)
		old = append(old, tool{"s", n, n, url, 0})
		switch i {
		case 3:
			new = append(new, tool{"s", n, n + "'", url | cmd, 0}) // gained cmd
		case 5:
			new = append(new, tool{"s", n, n + "'", url | cred, 0}) // gained cred
		default:
			new = append(new, tool{"s", n, n + "'", url, 0}) // changed, no class gained
		}
	}
	new = append(new, tool{"s", "plain", "plain", 0, 0}, tool{"s", "risky", "risky", cmd, 0})
	for _, tc := range []struct {
		first          int
		changed, added []string
	}{
		{2, []string{"t3", "t5"}, []string{"risky", "plain"}},
		{3, []string{"t3", "t5", "t0"}, []string{"risky", "plain"}},
		{20, []string{"t3", "t5", "t0", "t1", "t2", "t4"}, []string{"risky", "plain"}},
		{1, []string{"t3"}, []string{"risky"}},
	} {
		t.Run(fmt.Sprint("first=", tc.first), func(t *testing.T) {
			var changes bytes.Buffer
			d, err := Compare(context.Background(), writeRun(t, old), writeRun(t, new), Options{First: tc.first, Changes: &changes})
			if err != nil {
				t.Fatal(err)
			}
			names := func(cs []report.ToolChange) []string {
				var out []string
				for _, c := range cs {
					out = append(out, *c.Tool)
				}
				return out
			}
			if got := names(d.First.Changed); !slices.Equal(got, tc.changed) {
				t.Errorf("changed %v, want %v", got, tc.changed)
			}
			if got := names(d.First.Added); !slices.Equal(got, tc.added) {
				t.Errorf("added %v, want %v", got, tc.added)
			}
			var fileOrder []any
			for _, r := range readChanges(t, changes.Bytes()) {
				fileOrder = append(fileOrder, r[2])
			}
			if want := []any{"t0", "t1", "t2", "t3", "t4", "t5", "plain", "risky"}; !slices.Equal(fileOrder, want) {
				t.Errorf("changes.parquet order %v, want %v", fileOrder, want)
			}
		})
	}
}

func TestCompareRejectsRunsWithoutHashes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tools.parquet"), []byte("PAR1 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Compare(context.Background(), dir, dir, Options{}); err == nil {
		t.Fatal("no error for a broken tools.parquet")
	}
}

// TestReachability reads servers.jsonl beside each run's tables: servers
// listed in both releases and reachable in one only.
func TestReachability(t *testing.T) {
	oldDir, newDir := writeRun(t, []tool{{"a", "t", "t", 0, 0}}), writeRun(t, []tool{{"a", "t", "t", 0, 0}})
	for dir, text := range map[string]string{
		oldDir: `{"server_id": "a", "reachable": true}` + "\n" + `{"server_id": "b", "reachable": true}` + "\n" + `{"server_id": "c", "reachable": false}` + "\n" + `{"server_id": "d", "reachable": true}` + "\n",
		newDir: `{"server_id": "a", "reachable": true}` + "\n" + `{"server_id": "b", "reachable": false}` + "\n" + `{"server_id": "c", "reachable": true}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, "servers.jsonl"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Compare(context.Background(), oldDir, newDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Servers.ReachableOldOnly == nil || *d.Servers.ReachableOldOnly != 1 || *d.Servers.ReachableNewOnly != 1 ||
		!slices.Equal(d.First.ReachableOldOnly, []string{"b"}) || !slices.Equal(d.First.ReachableNewOnly, []string{"c"}) {
		t.Errorf("servers %+v, first %v %v", d.Servers, d.First.ReachableOldOnly, d.First.ReachableNewOnly)
	}
	// Without servers.jsonl on one side, the counts are left out.
	os.Remove(filepath.Join(newDir, "servers.jsonl"))
	if d, err = Compare(context.Background(), oldDir, newDir, Options{}); err != nil || d.Servers.ReachableOldOnly != nil {
		t.Errorf("without servers.jsonl: %+v, %v", d.Servers, err)
	}
}
