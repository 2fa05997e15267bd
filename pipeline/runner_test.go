package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/klauspost/compress/gzip"
	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

var finalOutputs = []string{"report.json", "report.md", "report.html", "tools.parquet", "properties.parquet", "classes.parquet"}

func gz(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// smallCensus builds a census of n tools drawn from the real schemas (with
// corners mixed in) and returns its folder and SHA256SUMS path.
func smallCensus(t testing.TB, n int) (string, string) {
	t.Helper()
	lines := realcorpus.Lines(t)
	rng := rand.New(rand.NewPCG(7, 7))
	var tools bytes.Buffer
	for i := 0; i < n; {
		k := 1 + rng.IntN(12)
		fmt.Fprintf(&tools, `{"server_id": "srv-%d", "tools": [`, rng.IntN(n/5+1))
		for j := 0; j < k && i < n; j, i = j+1, i+1 {
			var rec struct {
				Tool json.RawMessage `json:"tool"`
			}
			json.Unmarshal(lines[rng.IntN(len(lines))], &rec)
			if j > 0 {
				tools.WriteString(", ")
			}
			tools.Write(rec.Tool)
		}
		tools.WriteString("]}\n")
		if rng.IntN(50) == 0 {
			tools.WriteString("\n")
		}
	}
	tools.WriteString(`{"server_id": "x", "tool": {"name": "ſecret\ud800", "inputSchema": {"properties": {"İd": {"description": "amount in USD"}, "p": 1}, "required": ["p", 3], "properties": {"dest_path": {"description": NaN}}}}}` + "\n")
	files := map[string][]byte{
		release.ToolsFile:      gz(t, tools.Bytes()),
		release.ServersFile:    gz(t, []byte("{\"server_id\": \"a\"}\n{\"server_id\": \"b\"}\n")),
		release.CandidatesFile: []byte("{\"url\": \"https://x\"}\n"),
	}
	dir := t.TempDir()
	var sums strings.Builder
	for _, name := range hashverify.SnapshotFiles() {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(files[name])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), name)
	}
	sumsPath := filepath.Join(dir, "SHA256SUMS")
	os.WriteFile(sumsPath, []byte(sums.String()), 0o644)
	return dir, sumsPath
}

func runOpts(t testing.TB, data, sums string) Options {
	m, err := hashverify.ReadSHA256Sums(sums)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Data: data, Out: t.TempDir(), Manifest: m, ManifestName: "SHA256SUMS", Workers: 2, ChunkSize: 4096}
}

func assertNoOutputs(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("output left behind in %s: %s", dir, e.Name())
	}
}

// TestRunMatchesReference runs the pipeline and the Python reference on the
// same files and requires the same counts.
func TestRunMatchesReference(t *testing.T) {
	defer goleak.VerifyNone(t)
	data, sums := smallCensus(t, 8000)
	opt := runOpts(t, data, sums)
	r, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testenv.Python3(t), referencePy, "census", filepath.Join(data, release.ToolsFile)).Output()
	if err != nil {
		t.Fatalf("reference census: %v", err)
	}
	var want struct {
		Tools, Servers int64
		Shapes         map[string]int64
		Classes        map[string]struct{ Tools, Required int64 }
		Buckets        map[string]int64
	}
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	if r.Tools != want.Tools || r.Servers != want.Servers || r.Tools != 8001 {
		t.Errorf("tools/servers = %d/%d, reference %d/%d", r.Tools, r.Servers, want.Tools, want.Servers)
	}
	for id, w := range want.Classes {
		if c := r.Classes[id]; c.Tools != w.Tools || c.Required != w.Required || w.Tools == 0 {
			t.Errorf("%s = %d/%d, reference %d/%d", id, c.Tools, c.Required, w.Tools, w.Required)
		}
	}
	for id, w := range want.Buckets {
		if b := r.Buckets[id]; b.Tools != w || !b.NonNormative {
			t.Errorf("%s = %d, reference %d", id, b.Tools, w)
		}
	}
	for k, v := range want.Shapes {
		if r.Shapes[k] != v {
			t.Errorf("shape %s = %d, reference %d", k, r.Shapes[k], v)
		}
	}
	// Verified against its own sums, not the pinned ones: a release, with
	// no verdict to earn.
	if !r.Verified || r.Kind != report.KindRelease || r.Verdict != "" || len(r.Differences) != 0 {
		t.Errorf("kind %s verdict %q %v (verified %v)", r.Kind, r.Verdict, r.Differences, r.Verified)
	}
	for _, in := range r.Inputs {
		if !in.OK || in.SHA256 == "" || in.Records == 0 {
			t.Errorf("input %+v", in)
		}
	}
	for _, name := range finalOutputs {
		if _, err := os.Stat(filepath.Join(opt.Out, name)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(opt.Out, "report.md"))
	if !bytes.HasPrefix(md, []byte("# Census release report")) || bytes.Contains(md, []byte("REPRODUCED")) || !bytes.Contains(md, []byte("| `gg:url-endpoint` |")) {
		t.Errorf("report.md lacks the release title or the table, or gives a verdict:\n%s", md)
	}
	checkParquet(t, opt.Out, r)
}

// checkParquet reads the tables back with the Parquet reader: row counts,
// and every property row's server_id and tool equal those of the tool its
// tool_ordinal names.
func checkParquet(t *testing.T, dir string, r *report.Report) {
	t.Helper()
	read := func(name string) arrow.Table { return readTable(t, filepath.Join(dir, name)) }
	// column flattens a string or int64 column into Go values.
	column := func(tbl arrow.Table, name string) []any {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %q", name)
		}
		var out []any
		for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				switch a := chunk.(type) {
				case *array.String:
					if a.IsNull(i) {
						out = append(out, nil)
					} else {
						out = append(out, a.Value(i))
					}
				case *array.Int64:
					out = append(out, a.Value(i))
				default:
					t.Fatalf("column %q has type %T", name, chunk)
				}
			}
		}
		return out
	}
	tools, props, classes := read("tools.parquet"), read("properties.parquet"), read("classes.parquet")
	defer tools.Release()
	defer props.Release()
	defer classes.Release()
	if tools.NumRows() != r.Tools || props.NumRows() != r.Properties || classes.NumRows() != 7 {
		t.Fatalf("rows: tools %d (want %d), properties %d (want %d), classes %d (want 7)",
			tools.NumRows(), r.Tools, props.NumRows(), r.Properties, classes.NumRows())
	}
	toolServer, toolName := column(tools, "server_id"), column(tools, "tool")
	ord, server, name := column(props, "tool_ordinal"), column(props, "server_id"), column(props, "tool")
	for i := range ord {
		o := ord[i].(int64)
		if server[i] != toolServer[o] || name[i] != toolName[o] {
			t.Fatalf("properties row %d: server %v tool %v, but tool %d is %v/%v", i, server[i], name[i], o, toolServer[o], toolName[o])
		}
	}
}

// TestDeterministicAcrossWorkers requires byte-identical outputs for 1, 2
// and 8 workers.
func TestDeterministicAcrossWorkers(t *testing.T) {
	data, sums := smallCensus(t, 6000)
	var first map[string][]byte
	for _, w := range []int{1, 2, 8} {
		t.Run(fmt.Sprint("workers=", w), func(t *testing.T) {
			opt := runOpts(t, data, sums)
			opt.Workers = w
			opt.ChunkSize = 2048
			if _, err := Run(context.Background(), opt); err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{}
			for _, name := range finalOutputs {
				b, err := os.ReadFile(filepath.Join(opt.Out, name))
				if err != nil {
					t.Fatal(err)
				}
				got[name] = b
			}
			if first == nil {
				first = got
				return
			}
			for name, b := range got {
				if !bytes.Equal(b, first[name]) {
					t.Errorf("%s differs between 1 and %d workers", name, w)
				}
			}
		})
	}
}

func TestVerificationFailures(t *testing.T) {
	defer goleak.VerifyNone(t)
	data, sums := smallCensus(t, 500)

	// A hash mismatch names the file and both hashes, and publishes nothing.
	m, _ := hashverify.ReadSHA256Sums(sums)
	actual := m[release.ToolsFile]
	m[release.ToolsFile] = strings.Repeat("0", 64)
	opt := Options{Data: data, Out: t.TempDir(), Manifest: m, ManifestName: "SHA256SUMS", Workers: 2}
	_, err := Run(context.Background(), opt)
	var mm *hashverify.MismatchError
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), release.ToolsFile) ||
		!strings.Contains(err.Error(), actual) || !strings.Contains(err.Error(), strings.Repeat("0", 64)) {
		t.Fatalf("mismatch: %v", err)
	}
	assertNoOutputs(t, opt.Out)

	// The pinned hashes do not match a synthetic census either; the error
	// says what another release wants.
	opt = Options{Data: data, Out: t.TempDir(), Workers: 2}
	_, err = Run(context.Background(), opt)
	if !errors.As(err, &mm) {
		t.Fatalf("pinned manifest on synthetic data: %v", err)
	}
	// The sums beside the data are named.
	for _, want := range []string{"not the pinned", "--sha256sums " + filepath.Join(data, "SHA256SUMS"), "--no-verify"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("pinned mismatch error lacks %q: %v", want, err)
		}
	}
	assertNoOutputs(t, opt.Out)

	// A missing file is named.
	os.Remove(filepath.Join(data, release.CandidatesFile))
	opt = runOpts(t, data, sums)
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), release.CandidatesFile) {
		t.Fatalf("missing file: %v", err)
	}
	assertNoOutputs(t, opt.Out)
}

func TestNoVerifyIsUnverified(t *testing.T) {
	data, _ := smallCensus(t, 500)
	opt := Options{Data: data, Out: t.TempDir(), NoVerify: true, Workers: 2}
	r, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verified || r.Verdict != report.VerdictUnverified {
		t.Fatalf("verdict %s verified %v", r.Verdict, r.Verified)
	}
	md, _ := os.ReadFile(filepath.Join(opt.Out, "report.md"))
	if !bytes.HasPrefix(bytes.SplitN(md, []byte("\n\n"), 3)[1], []byte("> **UNVERIFIED**")) {
		t.Fatalf("report.md does not say UNVERIFIED at its top:\n%.300s", md)
	}
	js, _ := os.ReadFile(filepath.Join(opt.Out, "report.json"))
	if !bytes.Contains(js, []byte(`"verified": false`)) || !bytes.Contains(js, []byte(`"verdict": "UNVERIFIED"`)) {
		t.Fatalf("report.json: %.300s", js)
	}
}

func TestInspect(t *testing.T) {
	defer goleak.VerifyNone(t)
	data, _ := smallCensus(t, 300)
	os.Remove(filepath.Join(data, release.CandidatesFile))
	var out bytes.Buffer
	if err := Inspect(context.Background(), data, 20, 30, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"== server_tools.jsonl.gz", "first 20 records", "tools[].inputSchema.properties.*", "server", "== candidates_remotes.jsonl: not found"} {
		if !strings.Contains(s, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, s)
		}
	}
	if err := Inspect(context.Background(), t.TempDir(), 20, 30, &out); err == nil {
		t.Error("inspect of an empty folder succeeded")
	}
}
