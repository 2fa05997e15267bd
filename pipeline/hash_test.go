package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// hashesPy prints, per tool object on stdin (one a line), the SHA-256 of
// its canonical JSON and of its input schema's (as the reference's
// tool_schema chooses it; "null" when that is no object), with the
// canonical form of census/testdata/canonical.py.
const hashesPy = `
import hashlib, json, sys
sys.path[:0] = sys.argv[1:3]
import canonical, reference
h = lambda v: hashlib.sha256(canonical.canonical(v).encode("utf-8")).hexdigest()
lines = sys.stdin.buffer.read().split(b"\n")
for raw in lines[:-1]:
    t = json.loads(raw.decode("utf-8"))
    s = reference.tool_schema(t)
    print(h(t), h(s) if isinstance(s, dict) else "null")
`

// TestHashesMatchPython runs a census of every bundled real tool, each
// served twice in a row (the second time from the worker's memory of
// tool texts, while the first one's hashes may still wait for the
// batch), and requires each row's definition_sha256 and schema_sha256 to
// be the Python reference's: with the batch hashed once a chunk, and with
// it hashed every few tools (a giant record's case).
func TestHashesMatchPython(t *testing.T) {
	var tools, census bytes.Buffer
	for i, line := range realcorpus.Lines(t) {
		var rec struct {
			Tool json.RawMessage `json:"tool"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			tools.Write(rec.Tool)
			tools.WriteByte('\n')
		}
		if i%10 == 0 {
			if i > 0 {
				census.WriteString("]}\n")
			}
			fmt.Fprintf(&census, `{"server_id": "s%d", "tools": [`, i/10)
		} else {
			census.WriteString(", ")
		}
		census.Write(rec.Tool)
		census.WriteString(", ")
		census.Write(rec.Tool)
	}
	census.WriteString("]}\n")
	data := t.TempDir()
	for name, b := range map[string][]byte{
		release.ToolsFile:      gz(t, census.Bytes()),
		release.ServersFile:    gz(t, []byte(`{"server_id": "s0"}`+"\n")),
		release.CandidatesFile: []byte(`{"url": "https://x"}` + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(data, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(testenv.Python3(t), "-c", hashesPy, filepath.Join(testenv.Root(), "label", "census", "testdata"), filepath.Join(testenv.Root(), "bench"))
	cmd.Stdin = &tools
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	py, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.Bytes())
	}
	want := strings.Split(strings.TrimSuffix(string(py), "\n"), "\n")
	schemas := 0
	for i := range want {
		if !strings.HasSuffix(want[i], "null") {
			schemas++
		}
	}
	if len(want) != 2*realcorpus.Tools || schemas < realcorpus.Tools {
		t.Fatalf("%d reference lines, %d with a schema hash; want %d, at least half", len(want), schemas, 2*realcorpus.Tools)
	}
	for _, tc := range []struct {
		name  string
		batch int
	}{{"batch a chunk", maxBatchBytes}, {"batch every few tools", 2048}} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(b int) { maxBatchBytes = b }(maxBatchBytes)
			maxBatchBytes = tc.batch
			out := t.TempDir()
			if _, err := Run(context.Background(), Options{Data: data, Out: out, NoVerify: true, Workers: 2, ChunkSize: 8192}); err != nil {
				t.Fatal(err)
			}
			got := readHashes(t, filepath.Join(out, "tools.parquet"))
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("tool %d: definition and schema hashes %q, Python %q", i, got[i], want[i])
				}
			}
		})
	}
}

// readHashes reads definition_sha256 and schema_sha256 of every row, as
// "DEF SCHEMA" ("null" for a null).
func readHashes(t *testing.T, path string) []string {
	t.Helper()
	tbl := readTable(t, path)
	defer tbl.Release()
	col := func(name string) []string {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %s", name)
		}
		var out []string
		for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
			a, ok := chunk.(*array.FixedSizeBinary)
			if !ok || a.DataType().(*arrow.FixedSizeBinaryType).ByteWidth != sha256.Size {
				t.Fatalf("column %s is %s, want 32-byte binaries", name, chunk.DataType())
			}
			for i := range a.Len() {
				if a.IsNull(i) {
					out = append(out, "null")
				} else {
					out = append(out, hex.EncodeToString(a.Value(i)))
				}
			}
		}
		return out
	}
	defs, schemas := col("definition_sha256"), col("schema_sha256")
	rows := make([]string, len(defs))
	for i := range defs {
		rows[i] = defs[i] + " " + schemas[i]
	}
	return rows
}
