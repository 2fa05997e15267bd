package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
)

// TestNameOrdinalAndMetadata: tools.parquet numbers each tool among the
// tools of its name on its server, across records of every shape, nulls
// apart; every table carries the version, the rules and the source in its
// footer, and created_by names the build.
func TestNameOrdinalAndMetadata(t *testing.T) {
	lines := []string{
		`{"server_id": "a", "tool": {"name": "x"}}`,
		`{"server_id": "a", "tools": [{"name": "x"}, {"name": "y"}, {"name": "x"}]}`,
		`{"server_id": "b", "tools": [{"name": "x"}]}`,
		`{"tools": [{"name": "x"}, {"name": "x"}]}`,
		`{"server_id": "a", "tools": [{"name": 7}, {"description": "no name"}]}`,
		`{"server_id": "a", "name": "x", "inputSchema": {}}`,
	}
	// server/name: ordinal, in file order.
	want := []string{"a/x:0", "a/x:1", "a/y:0", "a/x:2", "b/x:0", "null/x:0", "null/x:1", "a/null:0", "a/null:1", "a/x:3"}
	dir := t.TempDir()
	files := map[string][]byte{
		release.ToolsFile:      gz(t, []byte(strings.Join(lines, "\n")+"\n")),
		release.ServersFile:    gz(t, []byte("{\"server_id\": \"a\"}\n")),
		release.CandidatesFile: []byte("{\"url\": \"https://x\"}\n"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	r, err := Run(context.Background(), Options{Data: dir, Out: out, NoVerify: true, Workers: 2, ChunkSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	// {"name": "x"} is served by a and b: the most shared definition, named.
	if ms := r.Definitions.MostShared; len(ms) != 1 || ms[0].Tool != "x" || ms[0].Servers != 2 {
		t.Errorf("most shared %+v, want one, the tool x on 2 servers", ms)
	}
	tbl := readTable(t, filepath.Join(out, "tools.parquet"))
	defer tbl.Release()
	str := func(name string, i int) string {
		c := tbl.Column(tbl.Schema().FieldIndices(name)[0]).Data().Chunk(0).(*array.String)
		if c.IsNull(i) {
			return "null"
		}
		return c.Value(i)
	}
	ords := tbl.Column(tbl.Schema().FieldIndices("name_ordinal")[0]).Data().Chunk(0).(*array.Int64)
	var got []string
	for i := range int(tbl.NumRows()) {
		got = append(got, fmt.Sprintf("%s/%s:%d", str("server_id", i), str("tool", i), ords.Value(i)))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("name ordinals\n got %v\nwant %v", got, want)
	}

	for _, name := range []string{"tools.parquet", "properties.parquet", "classes.parquet"} {
		pf, err := file.OpenParquetFile(filepath.Join(out, name), false)
		if err != nil {
			t.Fatal(err)
		}
		md := pf.MetaData()
		kv := md.KeyValueMetadata()
		for key, want := range map[string]string{
			tables.MetaVersion: "atlas-reproduce ",
			tables.MetaRules:   tables.RulesID(),
			tables.MetaSource:  "census files, hashes not checked",
		} {
			if v := kv.FindValue(key); v == nil || !strings.HasPrefix(*v, want) {
				t.Errorf("%s: metadata %s = %v, want %q", name, key, v, want)
			}
		}
		if cb := md.GetCreatedBy(); !strings.HasPrefix(cb, "atlas-reproduce version ") {
			t.Errorf("%s: created_by %q", name, cb)
		}
		pf.Close()
	}
}

// TestNameKeysFromWorkers: the keys workers compute with the run's seeds,
// each worker with its own keyer (and its reused buffer), number the tools
// alike, chunk after chunk, nulls and the (server, name) boundary apart
// ("ab"+"c" is not "a"+"bc").
func TestNameKeysFromWorkers(t *testing.T) {
	type tool struct {
		server, name string
		hasS, hasN   bool
	}
	chunks := [][]tool{
		{{"a", "x", true, true}, {"a", "x", true, true}, {"a", "y", true, true}, {"", "x", false, true}},
		{{"ab", "c", true, true}, {"a", "bc", true, true}, {"a", "x", true, true}, {"a", "", true, false}, {"a", "", true, true}},
		{{"", "", false, false}, {"", "", false, false}, {"a", "", true, false}, {"ab", "c", true, true}},
	}
	want := [][]int64{{0, 1, 0, 0}, {0, 0, 2, 0, 0}, {0, 1, 1, 1}}
	seeds := newNameSeeds()
	var sink, own nameOrdinals
	var worker, other nameKeyer
	for ci, c := range chunks {
		var b tables.ToolsBatch
		for i, tl := range c {
			b.AppendServerID([]byte(tl.server), tl.hasS)
			b.Name.AppendNullable([]byte(tl.name), tl.hasN)
			b.Line = append(b.Line, int64(i))
		}
		sink.add(&b, worker.keys(&seeds, &b, nil))
		fromWorker := slices.Clone(b.NameOrdinal)
		own.add(&b, other.keys(&seeds, &b, nil))
		if !slices.Equal(fromWorker, want[ci]) || !slices.Equal(b.NameOrdinal, want[ci]) {
			t.Errorf("chunk %d: ordinals from one worker's keys %v, from another's %v, want %v", ci, fromWorker, b.NameOrdinal, want[ci])
		}
	}
}

// BenchmarkNameOrdinals numbers the tools of a batch as the sink does: a
// server's tools in a run, server ids of a crawl's length.
func BenchmarkNameOrdinals(b *testing.B) {
	var batch tables.ToolsBatch
	for i := range 4096 {
		batch.AppendServerID([]byte(fmt.Sprintf("https://mcp-server-%05d.example.workers.dev/sse", i/8)), true)
		batch.Name.AppendNullable([]byte(fmt.Sprintf("get_resource_%d", i%8)), true)
		batch.Line = append(batch.Line, int64(i))
	}
	var n nameOrdinals
	var keyer nameKeyer
	seeds := newNameSeeds()
	var keys [][2]uint64
	b.ReportAllocs()
	for b.Loop() {
		keys = keyer.keys(&seeds, &batch, keys[:0])
		n.add(&batch, keys)
	}
}
