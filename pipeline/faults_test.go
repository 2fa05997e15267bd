package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"
	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/hashverify"
	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// writeCensus writes the three files with the given tools file content and
// returns the folder and a manifest matching the files as written.
func writeCensus(t *testing.T, tools []byte, candidates []byte) (string, hashverify.Manifest) {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{
		release.ToolsFile:      tools,
		release.ServersFile:    gz(t, []byte("{\"server_id\": \"a\"}\n")),
		release.CandidatesFile: candidates,
	}
	m := hashverify.Manifest{}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		m[name] = hex.EncodeToString(h[:])
	}
	return dir, m
}

const goodLine = `{"server_id": "s", "tools": [{"name": "t", "inputSchema": {"properties": {"url": {}}}}]}` + "\n"

func goodTools(n int) []byte { return []byte(strings.Repeat(goodLine, n)) }

// TestFaults: each broken input fails with a message naming the file and
// how far the run got, and leaves no output under a final name.
func TestFaults(t *testing.T) {
	defer goleak.VerifyNone(t)
	plain := goodTools(20000)
	gzipped := gz(t, plain)
	badCRC := append([]byte{}, gzipped...)
	badCRC[len(badCRC)-8] ^= 0xFF
	// The first block's type set to 3, which deflate reserves.
	badBlock := append([]byte{}, gzipped...)
	badBlock[10] |= 0x06
	cand := []byte("{\"url\": \"https://x\"}\n")
	tests := []struct {
		name       string
		tools      []byte
		candidates []byte
		want       []string
	}{
		{"truncated gzip", gzipped[:len(gzipped)/2], cand, []string{"server_tools.jsonl.gz", "corrupt or truncated gzip", "compressed bytes"}},
		{"bad CRC", badCRC, cand, []string{"server_tools.jsonl.gz", "checksum"}},
		{"corrupt deflate block", badBlock, cand, []string{"server_tools.jsonl.gz", "corrupt or truncated gzip", "corrupt deflate data before byte 11", "at line 1"}},
		{"trailing garbage", append(append([]byte{}, gzipped...), "garbage after the stream"...), cand, []string{"server_tools.jsonl.gz", "corrupt or truncated gzip", "invalid header"}},
		{"empty tools file", nil, cand, []string{"server_tools.jsonl.gz", "empty file"}},
		{"empty candidates file", gzipped, nil, []string{"candidates_remotes.jsonl", "empty file"}},
		{"gzip of nothing", gz(t, nil), cand, []string{"server_tools.jsonl.gz", "no tools"}},
		{"only blank lines", gz(t, []byte("\n  \n\t\n")), cand, []string{"server_tools.jsonl.gz", "no tools"}},
		{"not JSON", gz(t, append(goodTools(3), "{\"tools\": [}\n"...)), cand, []string{"server_tools.jsonl.gz: line 4:"}},
		{"not an object", gz(t, append(goodTools(5), "[1, 2]\n"...)), cand, []string{"server_tools.jsonl.gz: line 6:", "not a JSON object"}},
		{"tools not a list", gz(t, append(goodTools(2), "{\"tools\": {}}\n"...)), cand, []string{"server_tools.jsonl.gz: line 3:", `"tools" is not a list`}},
		{"invalid UTF-8", gz(t, append(goodTools(2), "{\"name\": \"\xff\"}\n"...)), cand, []string{"server_tools.jsonl.gz: line 3:"}},
		{"too deep", gz(t, []byte(`{"a": `+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+"}\n")), cand, []string{"server_tools.jsonl.gz: line 1:", "nesting depth"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, m := writeCensus(t, tc.tools, tc.candidates)
			out := t.TempDir()
			_, err := Run(context.Background(), Options{Data: data, Out: out, Manifest: m, ManifestName: "m", Workers: 2, ChunkSize: 4096})
			if err == nil {
				t.Fatal("the run succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			assertNoOutputs(t, out)
		})
	}
}

func TestZipWithMissingMember(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range map[string][]byte{
		"census/" + release.ToolsFile:   gz(t, goodTools(10)),
		"census/" + release.ServersFile: gz(t, []byte("{}\n")),
	} {
		w, _ := zw.Create(name)
		w.Write(body)
	}
	zw.Close()
	zipPath := filepath.Join(t.TempDir(), "mcp-atlas-milestone-a-baseline-20261013.zip")
	os.WriteFile(zipPath, buf.Bytes(), 0o644)
	out := t.TempDir()
	_, err := Run(context.Background(), Options{Data: zipPath, Out: out, NoVerify: true})
	if err == nil || !strings.Contains(err.Error(), release.CandidatesFile+": not found") || !strings.Contains(err.Error(), zipPath) {
		t.Fatalf("err = %v", err)
	}
	assertNoOutputs(t, out)
}

// TestSkipBad: --skip-bad goes on, counts the bad lines, lists the first
// ones in report.json and report.md, and the verdict cannot be REPRODUCED.
func TestSkipBad(t *testing.T) {
	var in bytes.Buffer
	bad := map[int]string{3: "not json", 7: "[1]", 12: `{"tools": 5}`}
	for i := 1; i <= 15; i++ {
		if s, ok := bad[i]; ok {
			in.WriteString(s + "\n")
		} else {
			in.WriteString(goodLine)
		}
	}
	data, m := writeCensus(t, gz(t, in.Bytes()), []byte("{}\n"))
	out := t.TempDir()
	r, err := Run(context.Background(), Options{Data: data, Out: out, Manifest: m, ManifestName: "m", SkipBad: true, Workers: 2, ChunkSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	if r.Skipped.Count != 3 || len(r.Skipped.First) != 3 || r.Skipped.First[0].Line != 3 || r.Skipped.First[2].Line != 12 || r.Tools != 12 {
		t.Fatalf("skipped %+v, tools %d", r.Skipped, r.Tools)
	}
	if r.Verdict == "REPRODUCED" || !strings.Contains(strings.Join(r.Differences, ";"), "3 bad lines skipped") {
		t.Fatalf("verdict %s %v", r.Verdict, r.Differences)
	}
	js, _ := os.ReadFile(filepath.Join(out, "report.json"))
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !bytes.Contains(js, []byte(`"skipped_lines": {`)) || !bytes.Contains(js, []byte(`"line": 7`)) {
		t.Errorf("report.json lacks the skipped lines:\n%s", js)
	}
	if !bytes.Contains(md, []byte("3 lines were skipped")) || !bytes.Contains(md, []byte("server_tools.jsonl.gz line 12")) {
		t.Errorf("report.md lacks the skipped lines:\n%s", md)
	}
}

func TestUnwritableOutput(t *testing.T) {
	data, m := writeCensus(t, gz(t, goodTools(10)), []byte("{}\n"))
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o644)
	_, err := Run(context.Background(), Options{Data: data, Out: filepath.Join(notDir, "out"), Manifest: m, ManifestName: "m"})
	if err == nil || !strings.Contains(err.Error(), "output folder") {
		t.Fatalf("err = %v", err)
	}
}

// TestDiskFull runs into a 256 KiB tmpfs: the write error is reported and
// every temporary file is removed.
func TestDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).CombinedOutput(); err != nil {
		testenv.Missing(t, "cannot mount a tmpfs here (%v %s): the test needs root", err, bytes.TrimSpace(out))
	}
	defer exec.Command("umount", mnt).Run()
	// Enough tools that the Parquet files outgrow the filesystem.
	var in bytes.Buffer
	for i := 0; i < 60000; i++ {
		fmt.Fprintf(&in, `{"server_id": "s%d", "tools": [{"name": "tool-%d", "inputSchema": {"properties": {"url_%d": {}}}}]}`+"\n", i, i, i)
	}
	data, m := writeCensus(t, gz(t, in.Bytes()), []byte("{}\n"))
	_, err := Run(context.Background(), Options{Data: data, Out: mnt, Manifest: m, ManifestName: "m", Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("err = %v, want no space left on device", err)
	}
	assertNoOutputs(t, mnt)
}

// cancelOnProgress cancels a context the first time the run reports
// progress, which happens once it has started reading: a deterministic way
// to cancel a run in the middle.
func cancelOnProgress(cancel context.CancelFunc) progress.Func {
	return func(progress.Report) { cancel() }
}

// TestCancelMidRun: a cancelled run stops every stage, publishes nothing,
// and leaks no goroutine.
func TestCancelMidRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	data, m := writeCensus(t, gz(t, goodTools(200000)), []byte("{}\n"))
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Run(ctx, Options{Data: data, Out: out, Manifest: m, ManifestName: "m", Workers: 4, ChunkSize: 4096, Progress: cancelOnProgress(cancel)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertNoOutputs(t, out)
}

// TestHugeLineAndName: a 64 MiB line (one tool whose description is nearly
// all of it) and a 1 MiB property name pass through the whole run and are
// classified.
func TestHugeLineAndName(t *testing.T) {
	var in bytes.Buffer
	in.WriteString(goodLine)
	in.WriteString(`{"server_id": "big", "tools": [{"name": "huge", "inputSchema": {"properties": {"webhook": {"description": "`)
	in.WriteString(strings.Repeat("word ", 64<<20/5))
	in.WriteString("amount in USD\"}, \"")
	in.WriteString(strings.Repeat("n", 1<<20))
	in.WriteString("_token\": {}}}}]}\n")
	in.WriteString(goodLine)
	data, m := writeCensus(t, gz(t, in.Bytes()), []byte("{}\n"))
	r, err := Run(context.Background(), Options{Data: data, Out: t.TempDir(), Manifest: m, ManifestName: "m", Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	url, money := r.Classes["gg:url-endpoint"], r.Classes["gg:money-amount"]
	if r.Tools != 3 || url.Tools != 3 || money.Tools != 1 || r.Classes["gg:credential-value"].Tools != 0 || r.Properties != 4 {
		t.Fatalf("tools %d, url %d, money %d, credential %d, properties %d", r.Tools, url.Tools, money.Tools, r.Classes["gg:credential-value"].Tools, r.Properties)
	}
}
