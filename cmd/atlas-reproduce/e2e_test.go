package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"

	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/zenodotest"
	"github.com/atlas-reproduce/atlas-reproduce/synth"
)

// makeCensus writes a synthetic census of n tools with the synth package.
func makeCensus(t *testing.T, n int) (string, *synth.Truth) {
	t.Helper()
	dir := t.TempDir()
	opt := synth.DefaultOptions()
	opt.Tools, opt.Servers = n, max(n/18, 1)
	truth, err := synth.Write(context.Background(), dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return dir, truth
}

// TestReproduceAgainstFakeZenodo runs the whole researcher's command: a
// loopback server answers the records API and serves a zip holding a
// synthetic census; reproduce fetches, verifies, runs and prints report.md.
func TestReproduceAgainstFakeZenodo(t *testing.T) {
	data, truth := makeCensus(t, 3000)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, name := range []string{release.ToolsFile, release.ServersFile, release.CandidatesFile} {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			t.Fatal(err)
		}
		w, _ := zw.Create("census/" + name)
		w.Write(b)
	}
	zw.Close()
	zipBytes := zbuf.Bytes()
	srv := zenodotest.New(t, testToken)
	srv.AddRecordFile("4242", zenodotest.File{Key: "census-release.zip", Data: zipBytes})

	dest, out := t.TempDir(), t.TempDir()
	stdout, stderr, code := run(t, "", "reproduce", "--dest", dest, "--out", out, "--record", "4242",
		"--base-url", srv.URL, "--sha256sums", filepath.Join(data, release.SumsFile))
	// The record is not the snapshot: the report is a release's, printed,
	// and reproduce exits with the verdict's status, as sha256sum -c does
	// when nothing reproduced.
	if code != exitVerdict {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "# Census release report") || !strings.Contains(stdout, fmt.Sprintf("%s tools on %s servers", group(truth.Tools), group(truth.Servers))) {
		t.Fatalf("stdout is not the report:\n%.600s", stdout)
	}
	if !strings.Contains(stderr, "a release report has no verdict") {
		t.Errorf("stderr does not say why it failed:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dest, "census-release.zip")); err != nil {
		t.Error(err)
	}
}

// TestDemoFlowMatchesTruth is make demo at a small scale: synth, run, and
// the counts in report.json equal the generator's ground truth.
func TestDemoFlowMatchesTruth(t *testing.T) {
	data, _ := makeCensus(t, 20000)
	out := t.TempDir()
	if _, stderr, code := run(t, "", "run", "--data", data, "--sha256sums", filepath.Join(data, release.SumsFile), "--out", out, "--require-reproduced"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.HasPrefix(string(md), "# Synthetic census report\n\nVerdict: **MATCHES TRUTH**") {
		t.Errorf("the demo's report does not say what it proved:\n%.400s", md)
	}
	truth, err := synth.ReadTruth(filepath.Join(data, synth.TruthFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Tools, Servers int
		Classes        map[string]struct{ Tools, Required int }
		Buckets        map[string]struct{ Tools int }
		Shapes         map[string]int
	}
	b, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Tools != truth.Tools || rep.Servers != truth.Servers {
		t.Errorf("tools/servers %d/%d, truth %d/%d", rep.Tools, rep.Servers, truth.Tools, truth.Servers)
	}
	for id, c := range truth.Classes {
		if rep.Classes[id].Tools != c.Tools || rep.Classes[id].Required != c.Required {
			t.Errorf("%s: %+v, truth %+v", id, rep.Classes[id], c)
		}
	}
	for id, n := range truth.Buckets {
		if rep.Buckets[id].Tools != n {
			t.Errorf("%s: %d, truth %d", id, rep.Buckets[id].Tools, n)
		}
	}
}

// fifoCensus is a copy of the census in data whose tools file is a named
// pipe. A run opens it only once it has taken its output folder and its
// signal handlers are in place, so the open is the run's readiness signal:
// start returns then, having fed the first bytes, and the test goes on with
// the run in progress and no guess at how long that takes.
type fifoCensus struct {
	dir, src string
	w        *os.File
	copied   chan error
}

func newFIFOCensus(t *testing.T, data string) *fifoCensus {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{release.ServersFile, release.CandidatesFile, release.SumsFile} {
		if err := os.Symlink(filepath.Join(data, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, release.ToolsFile), 0o600); err != nil {
		t.Fatal(err)
	}
	return &fifoCensus{dir: dir, src: filepath.Join(data, release.ToolsFile)}
}

// start blocks until the run opens the pipe, feeds it first bytes
// (a whole write, so the run is reading), then feeds the rest in the
// background.
func (f *fifoCensus) start(t *testing.T, first int64) {
	t.Helper()
	w, err := os.OpenFile(filepath.Join(f.dir, release.ToolsFile), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.w = w
	src, err := os.Open(f.src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(w, src, first); err != nil {
		t.Fatal(err)
	}
	f.copied = make(chan error, 1)
	go func() {
		defer src.Close()
		_, err := io.Copy(w, src)
		f.copied <- err
	}()
}

// finish closes the pipe once the run has exited (a write to a pipe whose
// reader is gone fails at once) and returns the feeder's error.
func (f *fifoCensus) finish() error {
	err := <-f.copied
	f.w.Close()
	return err
}

// TestSignalsStopTheRun sends SIGINT and SIGTERM to runs in progress: the
// process exits 130 or 143, publishes nothing, and stops promptly.
func TestSignalsStopTheRun(t *testing.T) {
	data, _ := makeCensus(t, 400000)
	for _, sig := range []struct {
		s    syscall.Signal
		code int
	}{{syscall.SIGINT, exitSIGINT}, {syscall.SIGTERM, exitSIGTERM}} {
		t.Run(sig.s.String(), func(t *testing.T) {
			fc := newFIFOCensus(t, data)
			out := t.TempDir()
			cmd := exec.Command(binary, "run", "--workers", "1", "--data", fc.dir, "--sha256sums", filepath.Join(data, release.SumsFile), "--out", out)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			fc.start(t, 1<<20)
			sent := time.Now()
			cmd.Process.Signal(sig.s)
			err := cmd.Wait()
			took := time.Since(sent)
			fc.finish() // cut short by the run's exit
			if cmd.ProcessState.ExitCode() != sig.code {
				t.Fatalf("%v: exit %d (%v), want %d\n%s", sig.s, cmd.ProcessState.ExitCode(), err, sig.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "no outputs were published") {
				t.Errorf("%v: stderr: %s", sig.s, stderr.String())
			}
			ents, _ := os.ReadDir(out)
			for _, e := range ents {
				t.Errorf("%v: left behind: %s", sig.s, e.Name())
			}
			t.Logf("%v: stopped %v after the signal", sig.s, took)
		})
	}
}

// TestSecondRunOnOneOut: a run on an OUT another run is writing exits 1 at
// once naming the first's pid, and the first completes undisturbed.
func TestSecondRunOnOneOut(t *testing.T) {
	data, _ := makeCensus(t, 20000)
	fc := newFIFOCensus(t, data)
	out := t.TempDir()
	sums := filepath.Join(data, release.SumsFile)
	first := exec.Command(binary, "run", "--data", fc.dir, "--sha256sums", sums, "--out", out)
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	fc.start(t, 1024)

	_, stderr, code := run(t, "", "run", "--data", data, "--sha256sums", sums, "--out", out)
	if code != exitFailure || !strings.Contains(stderr, fmt.Sprintf("pid %d", first.Process.Pid)) {
		t.Errorf("second run: exit %d, stderr %q; want exit 3 naming pid %d", code, stderr, first.Process.Pid)
	}

	if err := fc.finish(); err != nil {
		t.Fatalf("feeding the first run: %v", err)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first run: %v\n%s", err, firstErr.String())
	}
	ents, _ := os.ReadDir(out)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{"classes.parquet", "properties.parquet", "report.html", "report.json", "report.md", "tools.parquet"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("OUT holds %v, want %v", names, want)
	}
}

// TestReadersRefuseHalfCommittedFolder: a folder whose commit journal is
// pending (a writer killed between two renames) is refused by run --data and
// by diff, naming it.
func TestReadersRefuseHalfCommittedFolder(t *testing.T) {
	data, _ := makeCensus(t, 2000)
	sums := filepath.Join(data, release.SumsFile)
	out := t.TempDir()
	if _, stderr, code := run(t, "", "run", "--data", data, "--sha256sums", sums, "--out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	// The journal outset keeps while a commit is between its renames.
	for _, dir := range []string{data, out} {
		if err := os.WriteFile(filepath.Join(dir, ".outset-commit"), []byte(`{"files":[]}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	report := filepath.Join(out, "report.json")
	for _, tc := range []struct {
		name   string
		args   []string
		folder string
	}{
		{"run --data", []string{"run", "--data", data, "--sha256sums", sums, "--out", t.TempDir()}, data},
		{"diff", []string{"diff", report, report}, out},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, "", tc.args...)
			if code != exitFailure || !strings.Contains(stderr, tc.folder) || !strings.Contains(stderr, "half-committed") {
				t.Errorf("exit %d, stderr %q; want exit 3 naming %s as half committed", code, stderr, tc.folder)
			}
		})
	}
}

// TestRunRenameFailsHalfway: a run whose commit fails between two renames
// exits 1 and leaves OUT marked half committed, so diff refuses it instead
// of reading a report beside tables of another run; the next run completes
// the folder and publishes its own set.
func TestRunRenameFailsHalfway(t *testing.T) {
	data, _ := makeCensus(t, 2000)
	sums := filepath.Join(data, release.SumsFile)
	out := t.TempDir()
	args := []string{"run", "--data", data, "--sha256sums", sums, "--out", out}
	if _, stderr, code := run(t, "", args...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	// A folder where report.md should go makes that one rename fail.
	blocker := filepath.Join(out, "report.md")
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, "", args...); code != exitFailure || !strings.Contains(stderr, "report.md") {
		t.Fatalf("run over a blocked rename: exit %d, stderr %q; want exit 3 naming report.md", code, stderr)
	}
	report := filepath.Join(out, "report.json")
	if _, stderr, code := run(t, "", "diff", report, report); code != exitFailure || !strings.Contains(stderr, "half-committed") {
		t.Fatalf("diff of the half-committed OUT: exit %d, stderr %q", code, stderr)
	}
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, "", args...); code != 0 {
		t.Fatalf("run after the blocker is gone: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := run(t, "", "diff", report, report); code != 0 {
		t.Fatalf("diff after repair: exit %d\n%s", code, stderr)
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// group is n with thousands separators, as the reports print counts.
func group(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestRequireReproduced: --require-reproduced exits 1 unless the run
// earned its verdict.
func TestRequireReproduced(t *testing.T) {
	data, _ := makeCensus(t, 500)
	bad := filepath.Join(t.TempDir(), "truth.json")
	b, _ := os.ReadFile(filepath.Join(data, synth.TruthFile))
	os.WriteFile(bad, []byte(strings.Replace(string(b), `"tools": `, `"tools": 1`, 1)), 0o644)
	sums := filepath.Join(data, release.SumsFile)
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"synthetic, matching its truth", []string{"--sha256sums", sums}, 0, ""},
		{"synthetic, against another truth", []string{"--sha256sums", sums, "--truth", bad}, exitVerdict, "DIFFERS FROM TRUTH"},
		{"unverified", []string{"--no-verify", "--truth", bad}, exitVerdict, "verdict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--data", data, "--out", t.TempDir(), "--require-reproduced"}, tc.args...)
			_, stderr, code := run(t, "", args...)
			if code != tc.code || !strings.Contains(stderr, tc.says) {
				t.Errorf("exit %d, want %d, stderr lacks %q:\n%s", code, tc.code, tc.says, stderr)
			}
		})
	}
}
