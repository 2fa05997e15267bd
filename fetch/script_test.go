package fetch

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// script is scripts/fetch_zenodo.sh, relative to this package's directory.
var script = filepath.Join(testenv.Root(), "scripts", "fetch_zenodo.sh")

// requireTools fails, rather than skips, when a tool the script needs is
// missing: a skipped script test would let the script rot unnoticed.
func requireTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "md5sum", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the fetch_zenodo.sh tests need %s on PATH: %v", tool, err)
		}
	}
}

// runScript runs the script against z with a near-zero retry delay and an
// environment that cannot send curl anywhere but loopback.
func runScript(t *testing.T, z *fakeZenodo, args ...string) (stderr string, code int) {
	t.Helper()
	return runScriptEnv(t, z, nil, args...)
}

// runScriptEnv is runScript with extra NAME=VALUE environment entries.
func runScriptEnv(t *testing.T, z *fakeZenodo, env []string, args ...string) (stderr string, code int) {
	t.Helper()
	requireTools(t)
	home := t.TempDir()
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(name) {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy", "home", "curl_home",
			"zenodo_base_url", "zenodo_retries", "zenodo_retry_delay", "zenodo_timeout":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env,
		"HOME="+home, "CURL_HOME="+home, "NO_PROXY=*", "no_proxy=*",
		"ZENODO_BASE_URL="+z.api.URL, "ZENODO_RETRY_DELAY=0.001", "ZENODO_TIMEOUT=10")
	cmd.Env = append(cmd.Env, env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("running %s: %v", script, err)
	}
	t.Logf("%s %q: exit %d\n%s", script, args, code, errb.String())
	return errb.String(), code
}

func TestScriptHappyPath(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	a := randomBytes(300_000, 21)
	b := randomBytes(1_000, 22)
	z.add("100", "census.zip", a)
	z.add("100", "notes file.txt", b, func(f *fakeFile) { f.relative = true })
	z.add("200", "empty.txt", nil)
	dir := filepath.Join(t.TempDir(), "new", "dir")

	stderr, code := runScript(t, z, dir, "100", "200")

	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantFile(t, dir, "census.zip", a)
	wantFile(t, dir, "notes file.txt", b)
	wantFile(t, dir, "empty.txt", nil)
}

func TestScriptResumesDroppedConnection(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	data := randomBytes(200_000, 23)
	f := z.add("1", "big.bin", data, func(f *fakeFile) {
		f.redirect = true
		f.drops = []int64{70_000}
	})
	dir := t.TempDir()

	stderr, code := runScript(t, z, dir, "1")

	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantFile(t, dir, "big.bin", data)
	if got := z.fileRanges(f); !slices.Equal(got, []string{"", "bytes=70000-"}) {
		t.Fatalf("Range headers = %q, want a resume from 70000", got)
	}
}

func TestScriptServerIgnoringRange(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	data := randomBytes(50_000, 24)
	z.add("1", "big.bin", data, func(f *fakeFile) {
		f.ignoreRange = true
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.bin.part"), bytes.Repeat([]byte{0xAA}, 10_000), 0o644); err != nil {
		t.Fatal(err)
	}

	stderr, code := runScript(t, z, dir, "1")

	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantFile(t, dir, "big.bin", data)
	if !strings.Contains(stderr, "ignored the range request") {
		t.Errorf("stderr does not explain the restart: %s", stderr)
	}
}

func TestScriptWrongMD5(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	z.add("1", "bad.bin", randomBytes(5_000, 25), func(f *fakeFile) {
		f.listMD5 = md5hex([]byte("other"))
	})
	dir := t.TempDir()

	stderr, code := runScript(t, z, dir, "1")

	if code != 1 || !strings.Contains(stderr, "does not verify") {
		t.Fatalf("exit %d, stderr %s; want exit 1 and a verification error", code, stderr)
	}
	wantAbsent(t, filepath.Join(dir, "bad.bin"))
	wantAbsent(t, filepath.Join(dir, "bad.bin.part"))
}

func TestScriptNotFound(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	f := z.add("1", "gone.bin", []byte("x"), func(f *fakeFile) {
		f.fail = []int{404, 404}
	})
	dir := t.TempDir()

	stderr, code := runScript(t, z, dir, "1")

	if code != 1 || !strings.Contains(stderr, "404") || z.fileHits(f) != 1 {
		t.Fatalf("exit %d after %d requests, stderr %s; want exit 1 after one request", code, z.fileHits(f), stderr)
	}
	stderr, code = runScript(t, z, dir, "31337")
	if code != 1 || !strings.Contains(stderr, "record 31337") {
		t.Fatalf("missing record: exit %d, stderr %s", code, stderr)
	}
}

func TestScriptServiceUnavailableThenSuccess(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	data := randomBytes(10_000, 26)
	f := z.add("1", "f.bin", data, func(f *fakeFile) {
		f.fail = []int{503, 429}
		f.retryAfter = "0"
	})
	dir := t.TempDir()

	stderr, code := runScript(t, z, dir, "1")

	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantFile(t, dir, "f.bin", data)
	if z.fileHits(f) != 3 {
		t.Errorf("%d requests, want 3", z.fileHits(f))
	}
}

func TestScriptRetriesExhausted(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	f := z.add("1", "f.bin", []byte("x"), func(f *fakeFile) {
		f.fail = []int{503, 503, 503, 503}
	})
	dir := t.TempDir()

	stderr, code := runScriptEnv(t, z, []string{"ZENODO_RETRIES=2"}, dir, "1")

	if code != 1 || !strings.Contains(stderr, "giving up after 2 retries") || z.fileHits(f) != 3 {
		t.Fatalf("exit %d after %d requests, stderr %s; want exit 1 after 3", code, z.fileHits(f), stderr)
	}
	wantAbsent(t, filepath.Join(dir, "f.bin"))
}

func TestScriptCompleteFileNotFetchedTwice(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	data := randomBytes(20_000, 27)
	f := z.add("1", "f.bin", data)
	dir := t.TempDir()

	if _, code := runScript(t, z, dir, "1"); code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	stderr, code := runScript(t, z, dir, "1")

	if code != 0 || !strings.Contains(stderr, "already complete") {
		t.Fatalf("second run: exit %d, stderr %s", code, stderr)
	}
	if z.fileHits(f) != 1 {
		t.Fatalf("file requested %d times over two runs, want 1", z.fileHits(f))
	}
	wantFile(t, dir, "f.bin", data)
}

func TestScriptSnapshotPins(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	z.add("23333514", "mcp-atlas-milestone-a-baseline-20261013.zip", []byte("baseline"))
	audit := z.add("23333516", "mcp-atlas-audit-20261013-public.zip", []byte("audit"))
	dir := t.TempDir()

	stderr, code := runScript(t, z, dir)

	if code != 1 || !strings.Contains(stderr, "the record changed") || !strings.Contains(stderr, "23333514") {
		t.Fatalf("exit %d, stderr %s; want the record-changed error", code, stderr)
	}
	if z.fileHits(audit) != 0 {
		t.Error("a file was downloaded although a pin failed")
	}
}

func TestScriptUsage(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	if stderr, code := runScript(t, z); code != 2 || !strings.Contains(stderr, "usage:") {
		t.Fatalf("no arguments: exit %d, stderr %s", code, stderr)
	}
	if stderr, code := runScript(t, z, t.TempDir(), "../etc"); code != 1 || !strings.Contains(stderr, "not a Zenodo record ID") {
		t.Fatalf("bad record: exit %d, stderr %s", code, stderr)
	}
}

// TestShellcheck keeps the script shellcheck-clean. CI installs shellcheck,
// so there its absence is a failure; elsewhere the test is skipped.
func TestShellcheck(t *testing.T) {
	t.Parallel()
	path := testenv.Need(t, "shellcheck", "apt-get install shellcheck, to lint scripts/fetch_zenodo.sh")
	out, err := exec.Command(path, script).CombinedOutput()
	if err != nil {
		t.Fatalf("shellcheck %s: %v\n%s", script, err, out)
	}
}

// TestScriptRecordForms: every form ParseRecordID accepts reaches the same
// record, and a concept is fetched as its newest version, said by number. One
// run takes them all: the script is slow to start.
func TestScriptRecordForms(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	z.add("12", "data.zip", []byte("version two"))
	z.concept("10", "12")
	dir := t.TempDir()
	forms := []string{
		"10.5281/zenodo.12",
		"doi:10.5281/zenodo.12",
		"https://doi.org/10.5281/zenodo.12",
		"https://zenodo.org/doi/10.5281/zenodo.12",
		"https://zenodo.org/records/12/",
		"https://zenodo.org/doi/10.5281/zenodo.10", // the concept
	}
	stderr, code := runScript(t, z, append([]string{dir}, forms...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantFile(t, dir, "data.zip", []byte("version two"))
	if z.recordHits("12") != 2 || z.recordHits("10") != 1 {
		t.Errorf("records API asked for 12 %d times and 10 %d times; want 2 (one per distinct ID) and 1",
			z.recordHits("12"), z.recordHits("10"))
	}
	if !strings.Contains(stderr, "newest version, record 12") {
		t.Errorf("the version fetched was not said: %s", stderr)
	}
	for _, ua := range z.seenUserAgents() {
		if !strings.Contains(ua, "github.com/atlas-reproduce/atlas-reproduce") {
			t.Errorf("User-Agent %q does not name the project", ua)
		}
	}
}

// TestScriptSnapshotConcept: the snapshot's concept, once a newer version
// exists, fails on the pins.
func TestScriptSnapshotConcept(t *testing.T) {
	t.Parallel()
	z := newFakeZenodo(t)
	f := z.add("23333600", "mcp-atlas-audit-20261013-public.zip", []byte("a newer audit"))
	z.concept("23333515", "23333600")
	stderr, code := runScript(t, z, t.TempDir(), "10.5281/zenodo.23333515")
	if code != 1 || !strings.Contains(stderr, "the record changed") || !strings.Contains(stderr, "23333516") {
		t.Fatalf("exit %d, stderr %s; want the record-changed error", code, stderr)
	}
	if z.fileHits(f) != 0 {
		t.Error("a file was downloaded although a pin failed")
	}
}

func TestScriptHostileServer(t *testing.T) {
	t.Parallel()
	t.Run("control characters in a key", func(t *testing.T) {
		t.Parallel()
		z := newFakeZenodo(t)
		z.add("1", "a\x1b]0;pwned\x07.zip", []byte("x"))
		dir := t.TempDir()
		stderr, code := runScript(t, z, dir, "1")
		if code != 1 || strings.ContainsAny(stderr, "\x1b\x07") || !strings.Contains(stderr, "unsafe") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("redirect loop", func(t *testing.T) {
		t.Parallel()
		z := newFakeZenodo(t)
		z.add("1", "x.zip", []byte("x"), func(f *fakeFile) { f.location = z.files.URL + "/dl/1/x.zip" })
		dir := t.TempDir()
		stderr, code := runScript(t, z, dir, "1")
		if code != 1 || strings.Contains(stderr, "retry") {
			t.Fatalf("exit %d, stderr %s; want a failure without retries", code, stderr)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("a failed download left %v", entries)
		}
	})
}
