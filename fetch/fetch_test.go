package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waits records what Download asked to sleep, without sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// testOptions points Download at z with no pins, a tiny backoff and a
// recording sleep, so that no test spends real time waiting.
func testOptions(t *testing.T, z *fakeZenodo, records ...string) (Options, *waits) {
	w := &waits{}
	return Options{
		Dest:    t.TempDir(),
		Records: records,
		Pins:    []Pin{},
		BaseURL: z.api.URL,
		Backoff: func(n int) time.Duration { return time.Duration(n) * time.Millisecond },
		Sleep:   w.sleep,
		Logger:  messageLogger(func(msg string) { t.Log(msg) }),
	}, w
}

func mustDownload(t *testing.T, opts Options) []Result {
	t.Helper()
	res, err := Download(context.Background(), opts)
	if err != nil {
		t.Fatalf("Download: %v", err)
	}
	return res
}

// wantFile checks that dir holds name with data and no leftover .part.
func wantFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("%s: got %d bytes (MD5 %s), want %d bytes (MD5 %s)", name, len(got), md5hex(got), len(data), md5hex(data))
	}
	if _, err := os.Stat(filepath.Join(dir, name+".part")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s.part left behind (stat: %v)", name, err)
	}
}

func wantAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists, want it absent (stat: %v)", path, err)
	}
}

func TestHappyPath(t *testing.T) {
	z := newFakeZenodo(t)
	a := randomBytes(300_000, 1)
	b := randomBytes(12_345, 2)
	c := []byte{}
	fa := z.add("100", "census.zip", a)
	fb := z.add("100", "notes file.md", b, func(fb *fakeFile) {
		fb.relative = true
	})
	fc := z.add("200", "empty.txt", c)
	opts, w := testOptions(t, z, "100", "https://zenodo.org/records/200")
	var prog recordingProgress
	opts.Progress = prog.tell

	res := mustDownload(t, opts)

	wantFile(t, opts.Dest, "census.zip", a)
	wantFile(t, opts.Dest, "notes file.md", b)
	wantFile(t, opts.Dest, "empty.txt", c)
	if len(res) != 3 {
		t.Fatalf("got %d results, want 3", len(res))
	}
	wantKeys := []string{"census.zip", "notes file.md", "empty.txt"}
	for i, r := range res {
		if r.Key != wantKeys[i] || r.Path != filepath.Join(opts.Dest, wantKeys[i]) || r.Skipped || r.Resumed != 0 {
			t.Errorf("result %d = %+v", i, r)
		}
		if r.Transferred != r.Size {
			t.Errorf("%s: transferred %d, want %d", r.Key, r.Transferred, r.Size)
		}
	}
	if res[0].Record != "100" || res[2].Record != "200" {
		t.Errorf("records = %q, %q", res[0].Record, res[2].Record)
	}
	if !strings.HasPrefix(res[0].URL, z.files.URL) || !strings.HasPrefix(res[1].URL, z.api.URL+"/api/records/100/files/") {
		t.Errorf("URLs not resolved as expected: %q, %q", res[0].URL, res[1].URL)
	}
	if got := Paths(res); !slices.Equal(got, []string{res[0].Path, res[1].Path, res[2].Path}) {
		t.Errorf("Paths = %q", got)
	}
	// The empty file needs no request at all.
	if z.fileHits(fa) != 1 || z.fileHits(fb) != 1 || z.fileHits(fc) != 0 {
		t.Errorf("file requests = %d, %d, %d; want 1, 1, 0", z.fileHits(fa), z.fileHits(fb), z.fileHits(fc))
	}
	if len(w.all()) != 0 {
		t.Errorf("waited %v on a clean run", w.all())
	}
	if got := prog.finished(); !slices.Equal(got, wantKeys) {
		t.Errorf("progress finished %q, want %q", got, wantKeys)
	}
	if last := prog.last["census.zip"]; last != int64(len(a)) {
		t.Errorf("last progress update for census.zip = %d, want %d", last, len(a))
	}
}

func TestDroppedConnectionResumesWithRange(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(200_000, 3)
	f := z.add("1", "big.bin", data, func(f *fakeFile) {
		f.drops = []int64{70_000, 50_000}
	})
	opts, w := testOptions(t, z, "1")

	res := mustDownload(t, opts)

	wantFile(t, opts.Dest, "big.bin", data)
	want := []string{"", "bytes=70000-", "bytes=120000-"}
	if got := z.fileRanges(f); !slices.Equal(got, want) {
		t.Fatalf("Range headers = %q, want %q", got, want)
	}
	if res[0].Transferred != int64(len(data)) {
		t.Errorf("transferred %d, want %d", res[0].Transferred, len(data))
	}
	// Each drop made progress, so each retry starts the backoff afresh.
	if got := w.all(); !slices.Equal(got, []time.Duration{time.Millisecond, time.Millisecond}) {
		t.Errorf("waits = %v", got)
	}
}

func TestResumeFollowsRedirect(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(100_000, 14)
	f := z.add("1", "big.bin", data, func(f *fakeFile) {
		f.redirect = true
		f.drops = []int64{30_000}
	})
	opts, _ := testOptions(t, z, "1")

	mustDownload(t, opts)

	wantFile(t, opts.Dest, "big.bin", data)
	if got := z.fileRanges(f); !slices.Equal(got, []string{"", "bytes=30000-"}) {
		t.Fatalf("Range headers after the redirect = %q", got)
	}
}

func TestRerunResumesPartFile(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(100_000, 4)
	f := z.add("1", "big.bin", data)
	opts, _ := testOptions(t, z, "1")
	if err := os.WriteFile(filepath.Join(opts.Dest, "big.bin.part"), data[:40_000], 0o644); err != nil {
		t.Fatal(err)
	}

	res := mustDownload(t, opts)

	wantFile(t, opts.Dest, "big.bin", data)
	if got := z.fileRanges(f); !slices.Equal(got, []string{"bytes=40000-"}) {
		t.Fatalf("Range headers = %q", got)
	}
	if res[0].Resumed != 40_000 || res[0].Transferred != 60_000 {
		t.Errorf("resumed %d, transferred %d; want 40000, 60000", res[0].Resumed, res[0].Transferred)
	}
}

func TestServerIgnoringRangeRestartsFromZero(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(100_000, 5)
	f := z.add("1", "big.bin", data, func(f *fakeFile) {
		f.ignoreRange = true
		f.drops = []int64{30_000}
	})
	opts, _ := testOptions(t, z, "1")
	// A stale prefix that is not the file's: appending to it would fail the
	// MD5, so success proves the restart truncated it.
	if err := os.WriteFile(filepath.Join(opts.Dest, "big.bin.part"), bytes.Repeat([]byte{0xAA}, 10_000), 0o644); err != nil {
		t.Fatal(err)
	}
	var prog recordingProgress
	opts.Progress = prog.tell

	mustDownload(t, opts)

	wantFile(t, opts.Dest, "big.bin", data)
	// The first request resumes the stale 10,000 bytes, is answered with the
	// whole file, and drops after 30,000; the second resumes at 30,000 and
	// is answered with the whole file again.
	if got := z.fileRanges(f); !slices.Equal(got, []string{"bytes=10000-", "bytes=30000-"}) {
		t.Fatalf("Range headers = %q", got)
	}
	if !slices.Contains(prog.updates["big.bin"], 0) {
		t.Errorf("progress never went back to 0 on restart: %v", prog.updates["big.bin"])
	}
}

func TestWrongMD5RemovesPart(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(50_000, 6)
	f := z.add("1", "bad.bin", data, func(f *fakeFile) {
		f.listMD5 = md5hex([]byte("something else"))
	})
	opts, _ := testOptions(t, z, "1")

	_, err := Download(context.Background(), opts)

	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("err = %v, want ErrChecksum", err)
	}
	for _, want := range []string{"record 1", "bad.bin", md5hex(data), f.listMD5, "removed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The bytes are known to be wrong, so neither name may hold them.
	wantAbsent(t, filepath.Join(opts.Dest, "bad.bin"))
	wantAbsent(t, filepath.Join(opts.Dest, "bad.bin.part"))
	if z.fileHits(f) != 1 {
		t.Errorf("a checksum failure was retried: %d requests", z.fileHits(f))
	}
}

func TestServerSendingWrongSize(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(1000, 7)
	size := int64(999)
	z.add("1", "x.bin", data, func(f *fakeFile) { f.listSize = &size })
	opts, _ := testOptions(t, z, "1")

	_, err := Download(context.Background(), opts)

	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "999") {
		t.Fatalf("err = %v, want ErrChecksum naming the listed size", err)
	}
	wantAbsent(t, filepath.Join(opts.Dest, "x.bin"))
}

func TestNotFound(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		z := newFakeZenodo(t)
		f := z.add("1", "gone.bin", []byte("x"), func(f *fakeFile) { f.fail = []int{http.StatusNotFound, http.StatusNotFound} })
		opts, w := testOptions(t, z, "1")

		_, err := Download(context.Background(), opts)

		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound {
			t.Fatalf("err = %v, want a 404 StatusError", err)
		}
		if !strings.Contains(err.Error(), "gone.bin") || !strings.Contains(err.Error(), "404") {
			t.Errorf("error %q does not name the file and status", err)
		}
		if z.fileHits(f) != 1 || len(w.all()) != 0 {
			t.Errorf("404 was retried: %d requests, waits %v", z.fileHits(f), w.all())
		}
		wantAbsent(t, filepath.Join(opts.Dest, "gone.bin"))
	})
	t.Run("record", func(t *testing.T) {
		z := newFakeZenodo(t)
		opts, _ := testOptions(t, z, "999")

		_, err := Download(context.Background(), opts)

		if err == nil || !strings.Contains(err.Error(), "no such record") || !strings.Contains(err.Error(), "999") {
			t.Fatalf("err = %v, want a clear no-such-record error", err)
		}
		if z.recordHits("999") != 1 {
			t.Errorf("404 was retried: %d requests", z.recordHits("999"))
		}
	})
	t.Run("other 4xx", func(t *testing.T) {
		z := newFakeZenodo(t)
		f := z.add("1", "forbidden.bin", []byte("x"), func(f *fakeFile) { f.fail = []int{http.StatusForbidden} })
		opts, _ := testOptions(t, z, "1")

		_, err := Download(context.Background(), opts)

		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusForbidden || z.fileHits(f) != 1 {
			t.Fatalf("err = %v after %d requests, want one 403", err, z.fileHits(f))
		}
	})
}

func TestServiceUnavailableThenSuccess(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(10_000, 8)
	f := z.add("1", "f.bin", data, func(f *fakeFile) {
		f.fail = []int{503, 503, 500}
	})
	z.failRecord("1", 502)
	opts, w := testOptions(t, z, "1")

	mustDownload(t, opts)

	wantFile(t, opts.Dest, "f.bin", data)
	if z.fileHits(f) != 4 || z.recordHits("1") != 2 {
		t.Errorf("requests: file %d, record %d; want 4, 2", z.fileHits(f), z.recordHits("1"))
	}
	// The retry count, and so the backoff, starts afresh for each request:
	// the API's one retry, then the file's three.
	want := []time.Duration{1 * time.Millisecond, 1 * time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}
	if got := w.all(); !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	z := newFakeZenodo(t)
	data := []byte("payload")
	z.add("1", "f.bin", data, func(f *fakeFile) {
		f.fail = []int{http.StatusTooManyRequests}
		f.retryAfter = "7"
	})
	opts, w := testOptions(t, z, "1")

	mustDownload(t, opts)

	wantFile(t, opts.Dest, "f.bin", data)
	if got := w.all(); !slices.Equal(got, []time.Duration{7 * time.Second}) {
		t.Errorf("waits = %v, want [7s]", got)
	}
}

func TestRetryAfterTooLongFails(t *testing.T) {
	z := newFakeZenodo(t)
	f := z.add("1", "f.bin", []byte("x"), func(f *fakeFile) {
		f.fail = []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable}
		f.retryAfter = "86400"
	})
	opts, w := testOptions(t, z, "1")

	_, err := Download(context.Background(), opts)

	if err == nil || !strings.Contains(err.Error(), "retry after") || len(w.all()) != 0 || z.fileHits(f) != 1 {
		t.Fatalf("err = %v after %d requests, waits %v; want an error instead of a day's wait", err, z.fileHits(f), w.all())
	}
}

func TestRetriesExhausted(t *testing.T) {
	z := newFakeZenodo(t)
	f := z.add("1", "f.bin", []byte("x"), func(f *fakeFile) {
		f.fail = []int{503, 503, 503, 503, 503, 503}
	})
	opts, w := testOptions(t, z, "1")
	opts.Retries = 2

	_, err := Download(context.Background(), opts)

	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 503 || !strings.Contains(err.Error(), "giving up after 2 retries") {
		t.Fatalf("err = %v", err)
	}
	if z.fileHits(f) != 3 || len(w.all()) != 2 {
		t.Errorf("%d requests and %d waits, want 3 and 2", z.fileHits(f), len(w.all()))
	}
}

func TestNoRetries(t *testing.T) {
	z := newFakeZenodo(t)
	f := z.add("1", "f.bin", []byte("x"), func(f *fakeFile) {
		f.fail = []int{503}
	})
	opts, _ := testOptions(t, z, "1")
	opts.NoRetries = true

	if _, err := Download(context.Background(), opts); err == nil || z.fileHits(f) != 1 {
		t.Fatalf("err = %v after %d requests, want one failed request", err, z.fileHits(f))
	}
}

func TestCompleteFileNotFetchedTwice(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(64_000, 9)
	f := z.add("1", "f.bin", data)
	opts, _ := testOptions(t, z, "1")

	mustDownload(t, opts)
	var prog recordingProgress
	opts.Progress = prog.tell
	res := mustDownload(t, opts)

	wantFile(t, opts.Dest, "f.bin", data)
	if z.fileHits(f) != 1 {
		t.Fatalf("file requested %d times over two runs, want 1", z.fileHits(f))
	}
	if !res[0].Skipped || res[0].Transferred != 0 {
		t.Errorf("second run result = %+v, want Skipped", res[0])
	}
	if len(prog.started) != 0 || !slices.Equal(prog.finished(), []string{"f.bin"}) {
		t.Errorf("progress for a skipped file: started %q, finished %q", prog.started, prog.finished())
	}
}

func TestCorruptExistingFileIsReplaced(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(5_000, 10)
	f := z.add("1", "f.bin", data)
	opts, _ := testOptions(t, z, "1")
	bad := slices.Clone(data)
	bad[100] ^= 1
	if err := os.WriteFile(filepath.Join(opts.Dest, "f.bin"), bad, 0o644); err != nil {
		t.Fatal(err)
	}

	res := mustDownload(t, opts)

	wantFile(t, opts.Dest, "f.bin", data)
	if res[0].Skipped || z.fileHits(f) != 1 {
		t.Errorf("skipped %v with %d requests; want a fresh download", res[0].Skipped, z.fileHits(f))
	}
}

func TestCompletePartIsVerifiedWithoutRequest(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(5_000, 11)
	f := z.add("1", "f.bin", data)
	opts, _ := testOptions(t, z, "1")
	if err := os.WriteFile(filepath.Join(opts.Dest, "f.bin.part"), data, 0o644); err != nil {
		t.Fatal(err)
	}

	mustDownload(t, opts)

	wantFile(t, opts.Dest, "f.bin", data)
	if z.fileHits(f) != 0 {
		t.Errorf("%d requests for a complete .part, want 0", z.fileHits(f))
	}
}

func TestStalledServerIsAbandonedAndResumed(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(40_000, 12)
	f := z.add("1", "f.bin", data, func(f *fakeFile) {
		f.stalls = []int64{15_000}
	})
	opts, _ := testOptions(t, z, "1")
	// The only real wait in the suite: the idle limit has to expire once.
	opts.Timeout = 30 * time.Millisecond
	opts.Retries = 10

	mustDownload(t, opts)

	wantFile(t, opts.Dest, "f.bin", data)
	if got := z.fileRanges(f); len(got) < 2 || got[1] != "bytes=15000-" {
		t.Fatalf("Range headers = %q, want a resume from 15000", got)
	}
}

func TestCancelKeepsPart(t *testing.T) {
	z := newFakeZenodo(t)
	data := randomBytes(40_000, 13)
	z.add("1", "f.bin", data, func(f *fakeFile) {
		f.stalls = []int64{15_000}
	})
	opts, _ := testOptions(t, z, "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel as soon as the stalled attempt has written its bytes.
	opts.Progress = (&cancelAt{at: 15_000, cancel: cancel}).tell

	_, err := Download(ctx, opts)

	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	got, rerr := os.ReadFile(filepath.Join(opts.Dest, "f.bin.part"))
	if rerr != nil || !bytes.Equal(got, data[:15_000]) {
		t.Fatalf(".part holds %d bytes (err %v), want the 15000 received", len(got), rerr)
	}
	wantAbsent(t, filepath.Join(opts.Dest, "f.bin"))
}

func TestSnapshotPinsChecked(t *testing.T) {
	z := newFakeZenodo(t)
	// The real pinned bytes are not available here, so the fake lists the
	// pinned names with other content: the record changed.
	z.add("23333514", "mcp-atlas-milestone-a-baseline-20261013.zip", []byte("baseline"))
	audit := z.add("23333516", "mcp-atlas-audit-20261013-public.zip", []byte("audit"))
	// Snapshot ignores records and pins it is given.
	opts, _ := testOptions(t, z, "1")

	_, err := Snapshot(context.Background(), opts)

	if !errors.Is(err, ErrRecordChanged) || !strings.Contains(err.Error(), "23333514") || !strings.Contains(err.Error(), "9d383214877ad5c06749995e67a893f5") {
		t.Fatalf("err = %v, want ErrRecordChanged for record 23333514", err)
	}
	if z.recordHits("23333514") != 1 {
		t.Errorf("default records were not asked for")
	}
	if z.fileHits(audit) != 0 {
		t.Errorf("a file was downloaded although a pin failed")
	}
}

func TestPins(t *testing.T) {
	data := []byte("pinned content")
	for _, tc := range []struct {
		name string
		pin  Pin
		want error
	}{
		{"match", Pin{Record: "7", Key: "a.zip", Size: int64(len(data)), MD5: md5hex(data)}, nil},
		{"size unpinned", Pin{Record: "7", Key: "a.zip", Size: -1, MD5: strings.ToUpper(md5hex(data))}, nil},
		{"md5", Pin{Record: "7", Key: "a.zip", Size: -1, MD5: md5hex([]byte("other"))}, ErrRecordChanged},
		{"size", Pin{Record: "7", Key: "a.zip", Size: 1, MD5: md5hex(data)}, ErrRecordChanged},
		{"missing file", Pin{Record: "7", Key: "b.zip", Size: -1, MD5: md5hex(data)}, ErrRecordChanged},
		{"other record", Pin{Record: "8", Key: "b.zip", Size: -1, MD5: md5hex(data)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := newFakeZenodo(t)
			f := z.add("7", "a.zip", data)
			opts, _ := testOptions(t, z, "10.5281/zenodo.7")
			opts.Pins = []Pin{tc.pin}
			_, err := Download(context.Background(), opts)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want != nil && z.fileHits(f) != 0 {
				t.Errorf("downloaded despite a pin mismatch")
			}
		})
	}
}

func TestBadRecordMetadata(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{"not json", `<html>`, "not the expected JSON"},
		{"no files", `{"files":[]}`, "lists no files"},
		{"traversal", `{"files":[{"key":"../x","size":1,"checksum":"md5:0cc175b9c0f1b6a831c399e269772661","links":{"self":"/x"}}]}`, "path separator"},
		{"dotdot", `{"files":[{"key":"..","size":1,"checksum":"md5:0cc175b9c0f1b6a831c399e269772661","links":{"self":"/x"}}]}`, "not a plain name"},
		{"sha256", `{"files":[{"key":"a","size":1,"checksum":"sha256:00","links":{"self":"/x"}}]}`, "no MD5"},
		{"no size", `{"files":[{"key":"a","checksum":"md5:0cc175b9c0f1b6a831c399e269772661","links":{"self":"/x"}}]}`, "no size"},
		{"no link", `{"files":[{"key":"a","size":1,"checksum":"md5:0cc175b9c0f1b6a831c399e269772661"}]}`, "no links.self"},
		{"ftp link", `{"files":[{"key":"a","size":1,"checksum":"md5:0cc175b9c0f1b6a831c399e269772661","links":{"self":"ftp://h/a"}}]}`, "not http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newStaticServer(t, tc.body)
			_, err := Download(context.Background(), Options{Dest: t.TempDir(), Records: []string{"5"}, Pins: []Pin{}, BaseURL: srv})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "record 5") {
				t.Fatalf("err = %v, want it to mention %q and the record", err, tc.want)
			}
		})
	}
}

func TestDuplicateKeysAcrossRecords(t *testing.T) {
	z := newFakeZenodo(t)
	z.add("1", "same.zip", []byte("a"))
	z.add("2", "Same.zip", []byte("b"))
	opts, _ := testOptions(t, z, "1", "2", "1")
	if _, err := Download(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "clashes") {
		t.Fatalf("err = %v, want a clash", err)
	}
}

func TestParseRecordID(t *testing.T) {
	good := map[string]string{
		"23333516":                                "23333516",
		" 23333516 ":                              "23333516",
		"10.5281/zenodo.23333516":                 "23333516",
		"doi:10.5281/zenodo.23333516":             "23333516",
		"https://doi.org/10.5281/zenodo.23333516": "23333516",
		"https://zenodo.org/records/23333516":     "23333516",
		"https://zenodo.org/record/23333516/":     "23333516",
		"https://sandbox.zenodo.org/records/12":   "12",
		"https://zenodo.org/api/records/23333514": "23333514",
	}
	for in, want := range good {
		if got, err := ParseRecordID(in); err != nil || got != want {
			t.Errorf("ParseRecordID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "1/../2", "10.5281/zenodo.", "https://example.org/records/1", "-1"} {
		if got, err := ParseRecordID(in); err == nil {
			t.Errorf("ParseRecordID(%q) = %q, want an error", in, got)
		}
	}
}

func TestSnapshotPinsArePublishedValues(t *testing.T) {
	pins := SnapshotPins()
	want := []Pin{
		{"23333514", "23333513", "mcp-atlas-milestone-a-baseline-20261013.zip", -1, "9d383214877ad5c06749995e67a893f5"},
		{"23333516", "23333515", "mcp-atlas-audit-20261013-public.zip", 11044763, "a22741da7be8622cdaf1783afa91e225"},
	}
	if !slices.Equal(pins, want) {
		t.Fatalf("SnapshotPins() = %+v", pins)
	}
	pins[0].MD5 = "changed"
	if SnapshotPins()[0].MD5 == "changed" {
		t.Fatal("SnapshotPins exposes its backing array")
	}
	if got := SnapshotRecordIDs(); !slices.Equal(got, []string{"23333514", "23333516"}) {
		t.Fatalf("SnapshotRecordIDs() = %q", got)
	}
}

func TestDefaultBackoff(t *testing.T) {
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute}
	for i, w := range want {
		if got := DefaultBackoff(i + 1); got != w {
			t.Errorf("DefaultBackoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	if DefaultBackoff(1000) != time.Minute {
		t.Error("DefaultBackoff does not cap")
	}
}

func TestParseContentRange(t *testing.T) {
	for _, tc := range []struct {
		in          string
		from, total int64
		ok          bool
	}{
		{"bytes 10-99/100", 10, 100, true},
		{"bytes 0-0/*", 0, -1, true},
		{"bytes */100", 0, 0, false},
		{"items 1-2/3", 0, 0, false},
		{"", 0, 0, false},
	} {
		from, total, err := parseContentRange(tc.in)
		if (err == nil) != tc.ok || (tc.ok && (from != tc.from || total != tc.total)) {
			t.Errorf("parseContentRange(%q) = %d, %d, %v", tc.in, from, total, err)
		}
	}
}

func TestNoDestination(t *testing.T) {
	if _, err := Download(context.Background(), Options{}); err == nil {
		t.Fatal("Download without Dest succeeded")
	}
}

// newStaticServer answers every request with body as JSON.
func newStaticServer(t *testing.T, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// recordingProgress remembers every progress report: the files whose
// transfer started (a report before the last), every Done of each file,
// and the files finished.
type recordingProgress struct {
	started []string
	updates map[string][]int64
	last    map[string]int64
	done    []string
}

func (p *recordingProgress) tell(r progress.Report) {
	if p.updates == nil {
		p.updates, p.last = map[string][]int64{}, map[string]int64{}
	}
	final := r.Failed > 0 || r.Done == r.Total
	if !final {
		if _, seen := p.updates[r.Task]; !seen {
			p.started = append(p.started, r.Task)
		}
		p.updates[r.Task] = append(p.updates[r.Task], r.Done)
		p.last[r.Task] = r.Done
		return
	}
	if r.Failed == 0 {
		p.last[r.Task] = r.Done
	}
	// The last byte's report and the verified one both say Done == Total.
	if n := len(p.done); n == 0 || p.done[n-1] != r.Task {
		p.done = append(p.done, r.Task)
	}
}

func (p *recordingProgress) finished() []string { return p.done }

// cancelAt cancels the run once a file reaches a given length.
type cancelAt struct {
	at     int64
	cancel context.CancelFunc
}

func (c *cancelAt) tell(r progress.Report) {
	if r.Done >= c.at {
		c.cancel()
	}
}

// messageLogger hands the message of each record logged to fn.
func messageLogger(fn func(msg string)) *slog.Logger { return slog.New(messageHandler{fn}) }

type messageHandler struct{ fn func(string) }

func (h messageHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h messageHandler) Handle(_ context.Context, r slog.Record) error {
	h.fn(r.Message)
	return nil
}

func (h messageHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h messageHandler) WithGroup(string) slog.Handler { return h }

// TestUnknownHostNotRetried: a name that does not resolve fails at once,
// saying so; a temporary failure of the resolver is retried.
func TestUnknownHostNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dnsErr  net.DNSError
		dials   int
		message string
	}{
		{"no such host", net.DNSError{Err: "no such host", Name: "zenodo.invalid", IsNotFound: true}, 1, "does not resolve"},
		{"resolver timeout", net.DNSError{Err: "i/o timeout", Name: "zenodo.invalid", IsTimeout: true, IsTemporary: true}, 3, "giving up after 2 retries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := newFakeZenodo(t)
			z.add("1", "f.bin", []byte("x"))
			opts, _ := testOptions(t, z, "1")
			opts.Retries = 2
			dials := 0
			tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
				dials++
				e := tc.dnsErr
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &e}
			}}
			defer tr.CloseIdleConnections()
			opts.HTTPClient = &http.Client{Transport: tr}
			_, err := Download(context.Background(), opts)
			if err == nil || !strings.Contains(err.Error(), tc.message) || dials != tc.dials {
				t.Errorf("err %v after %d dials; want one naming %q after %d", err, dials, tc.message, tc.dials)
			}
		})
	}
}
