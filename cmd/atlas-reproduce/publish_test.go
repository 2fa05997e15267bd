package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodotest"
	"github.com/atlas-reproduce/atlas-reproduce/publish"
	"github.com/atlas-reproduce/atlas-reproduce/publish/zenodo"
)

const testToken = "zt-0123456789-secret"

// runWithEnv is run with extra environment variables.
func runWithEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	}
	t.Fatalf("running %v: %v", args, err)
	return "", "", -1
}

var recordLine = regexp.MustCompile(`(?m)^record (\d+), DOI (\S+): (draft|published)`)

// deposit publishes data and run to the stand-in and returns the new
// record's id.
func deposit(t *testing.T, z *zenodotest.Server, data, run, date string, extra ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "deposit")
	args := append([]string{"publish", "--data", data, "--run", run, "--out", out, "--date", date, "--zenodo", z.URL, "--publish"}, extra...)
	stdout, stderr, code := runWithEnv(t, []string{"ZENODO_TOKEN=" + testToken}, args...)
	if code != 0 {
		t.Fatalf("publish: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, testToken) {
		t.Fatalf("the token was printed")
	}
	m := recordLine.FindStringSubmatch(stdout)
	if m == nil || m[3] != "published" || m[2] != zenodotest.DOI(m[1]) {
		t.Fatalf("publish did not print the record and its DOI:\n%s", stdout)
	}
	return m[1]
}

// TestPublishThenReproduceRecord is the round trip: a census is run,
// published to the stand-in (a first release, then a new version of it),
// and reproduce fetches the new version into a clean folder and holds a
// new run to its published table; then the same with one byte of a census
// file changed, and with one published count changed.
func TestPublishThenReproduceRecord(t *testing.T) {
	z := zenodotest.New(t, testToken)
	data, _ := makeCensus(t, 2500)
	run1 := filepath.Join(t.TempDir(), "run")
	if _, stderr, code := run(t, "", "run", "--data", data, "--out", run1, "--sha256sums", filepath.Join(data, release.SumsFile), "--progress=false"); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	v1 := deposit(t, z, data, run1, "2026-11-01")
	concept := z.Get(v1).Concept
	v2 := deposit(t, z, data, run1, "2026-12-01", "--concept", concept, "--previous-doi", zenodotest.DOI(v1))
	if z.Latest(concept) != v2 {
		t.Fatalf("the concept's latest is %s, want the new version %s", z.Latest(concept), v2)
	}
	var keys []string
	for _, f := range z.Get(v2).Files {
		keys = append(keys, f.Key)
	}
	slices.Sort(keys)
	if want := "CITATION.cff SHA256SUMS classes.parquet mcp-atlas-census-20261201.zip release.json report.json"; strings.Join(keys, " ") != want {
		t.Fatalf("the new version holds %v, want %s (the inherited zip removed)", keys, want)
	}

	var lastOut string
	reproduce := func(record string) (string, string, int) {
		lastOut = filepath.Join(t.TempDir(), "out")
		return run(t, "", "reproduce", "--record", record, "--base-url", z.URL, "--dest", t.TempDir(), "--out", lastOut, "--progress=false")
	}
	verdictFile := func() string {
		b, _ := os.ReadFile(filepath.Join(lastOut, publish.VerdictFile))
		var v struct {
			Verdict string `json:"verdict"`
		}
		json.Unmarshal(b, &v)
		return v.Verdict
	}
	// By the concept id: its latest version, the new one.
	stdout, stderr, code := reproduce(concept)
	if code != 0 || !strings.Contains(stdout, "**REPRODUCED**") {
		t.Fatalf("reproduce --record %s: exit %d\n%s\n%s", concept, code, stdout, stderr)
	}
	if v := verdictFile(); v != "REPRODUCED" {
		t.Errorf("%s says %q", publish.VerdictFile, v)
	}

	// One byte of server_tools.jsonl.gz changed inside the zip.
	zipName := "mcp-atlas-census-20261201.zip"
	var zb []byte
	for _, f := range z.Get(v2).Files {
		if f.Key == zipName {
			zb = append([]byte(nil), f.Data...)
		}
	}
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range zr.File {
		if m.Name == release.ToolsFile {
			off, err := m.DataOffset()
			if err != nil {
				t.Fatal(err)
			}
			zb[off+int64(m.CompressedSize64/2)] ^= 0x20
		}
	}
	z.SetFile(v2, zipName, zb)
	stdout, stderr, code = reproduce(v2)
	if code != exitFailure || !strings.Contains(stderr, zipName+": SHA-256 mismatch") || strings.Contains(stdout, "REPRODUCED") {
		t.Errorf("a changed byte: exit %d, stderr:\n%s", code, stderr)
	}

	// One published count changed: a release published with a table
	// that is not its files' table.
	run3 := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(run3, os.DirFS(run1)); err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	b, _ := os.ReadFile(filepath.Join(run3, "report.json"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	rep["servers"] = rep["servers"].(float64) + 1
	b, _ = json.Marshal(rep)
	os.WriteFile(filepath.Join(run3, "report.json"), b, 0o644)
	v3 := deposit(t, z, data, run3, "2026-12-02", "--concept", concept)
	stdout, stderr, code = reproduce(v3)
	if code != exitVerdict || !strings.Contains(stdout, "**NOT REPRODUCED**") || !regexp.MustCompile(`(?m)^- servers \d+, published \d+$`).MatchString(stdout) {
		t.Errorf("a changed count: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if v := verdictFile(); v != "NOT REPRODUCED" {
		t.Errorf("%s says %q", publish.VerdictFile, v)
	}
}

// TestPublishRefusals: the token comes from the environment only, and a
// refusal by Zenodo is an error that says so and keeps the token out.
func TestPublishRefusals(t *testing.T) {
	z := zenodotest.New(t, testToken)
	data, _ := makeCensus(t, 300)
	run1 := filepath.Join(t.TempDir(), "run")
	if _, stderr, code := run(t, "", "run", "--data", data, "--out", run1, "--sha256sums", filepath.Join(data, release.SumsFile), "--progress=false"); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	base := []string{"publish", "--data", data, "--run", run1, "--date", "2026-11-01", "--zenodo", z.URL}
	out := func() string { return filepath.Join(t.TempDir(), "d") }
	if _, stderr, code := runWithEnv(t, []string{"ZENODO_TOKEN="}, append(base, "--out", out())...); code != exitUsage || !strings.Contains(stderr, "ZENODO_TOKEN") {
		t.Errorf("no token: exit %d, %s", code, stderr)
	}
	stdout, stderr, code := runWithEnv(t, []string{"MY_TOKEN=wrong-" + testToken}, append(base, "--out", out(), "--token-env", "MY_TOKEN")...)
	if code != exitFailure || !strings.Contains(stderr, "401") || !strings.Contains(stderr, "token was refused") || strings.Contains(stdout+stderr, testToken) {
		t.Errorf("wrong token: exit %d\n%s", code, stderr)
	}
	if _, _, code := runWithEnv(t, nil, append(base, "--out", out(), "--token", "x")...); code != exitUsage {
		t.Errorf("--token accepted as an argument: exit %d", code)
	}
}

// TestReproduceReleaseWithoutTable: a record holding a release with its
// SHA256SUMS and release.json but no published table is verified, run,
// and said to be a release with no published counts.
func TestReproduceReleaseWithoutTable(t *testing.T) {
	z := zenodotest.New(t, testToken)
	data, _ := makeCensus(t, 400)
	os.WriteFile(filepath.Join(data, release.File), []byte(`{"started":"2026-11-01T00:00:00Z","finished":"2026-11-01T01:00:00Z"}`), 0o644)
	names := []string{release.SumsFile, release.File, release.ServersFile, release.ToolsFile, release.CandidatesFile}
	c := &zenodo.Client{BaseURL: z.URL, Token: testToken, HTTP: z.Client()}
	meta := json.RawMessage(`{"upload_type":"dataset","title":"t","creators":[{"name":"A"}],"description":"d"}`)
	d, err := c.Deposit(context.Background(), zenodo.Upload{Dir: data, Files: names, Metadata: meta, Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, "", "reproduce", "--record", d.ID, "--base-url", z.URL, "--dest", t.TempDir(), "--out", filepath.Join(t.TempDir(), "out"), "--progress=false")
	if code != exitVerdict || !strings.Contains(stdout, "A release with no published counts") || !strings.Contains(stderr, "no published counts") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestPublishResumesADroppedUpload: an upload cut off with no retries
// left keeps its draft and says --draft ID; the same command with it
// uploads the deposit already written, sending only what is missing.
func TestPublishResumesADroppedUpload(t *testing.T) {
	z := zenodotest.New(t, testToken)
	data, _ := makeCensus(t, 300)
	run1 := filepath.Join(t.TempDir(), "run")
	if _, stderr, code := run(t, "", "run", "--data", data, "--out", run1, "--sha256sums", filepath.Join(data, release.SumsFile), "--progress=false"); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	z.DropUploads("report.json", 1)
	out := filepath.Join(t.TempDir(), "deposit")
	args := []string{"publish", "--data", data, "--run", run1, "--out", out, "--date", "2026-11-01", "--zenodo", z.URL, "--retries", "0"}
	env := []string{"ZENODO_TOKEN=" + testToken}
	_, stderr, code := runWithEnv(t, env, args...)
	m := regexp.MustCompile(`--draft (\d+)`).FindStringSubmatch(stderr)
	if code != exitFailure || m == nil {
		t.Fatalf("a dropped upload: exit %d\n%s", code, stderr)
	}
	before := len(z.Get(m[1]).Files)
	stdout, stderr, code := runWithEnv(t, env, append(args, "--draft", m[1], "--publish")...)
	if code != 0 || !strings.Contains(stdout, "already written") || !strings.Contains(stdout, "record "+m[1]+", DOI") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	puts := 0
	for _, r := range z.Requests() {
		if strings.HasPrefix(r, "PUT /api/files/") {
			puts++
		}
	}
	// The first attempt sent the files before report.json and report.json
	// once (dropped); the resume sent report.json and those after it.
	if d := z.Get(m[1]); !d.Published || len(d.Files) != 6 || before != 3 || puts != 7 {
		t.Errorf("published %v with %d files (%d before the resume), %d uploads", d.Published, len(d.Files), before, puts)
	}
}
