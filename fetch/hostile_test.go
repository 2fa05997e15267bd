package fetch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
)

// TestKeyWithControlCharacters: a key that would act on a terminal is
// refused before anything is written, and the error shows it escaped.
func TestKeyWithControlCharacters(t *testing.T) {
	for _, key := range []string{
		"a\x1b]0;pwned\x07.zip", // set the terminal title
		"a\x1b[2J.zip",          // clear the screen
		"bell\a.zip",
		"del\x7f.zip",
		"c1\u009b2J.zip",    // CSI as one C1 character
		"evil\u202egnp.zip", // right-to-left override
	} {
		t.Run(strings.ToValidUTF8(strings.Map(func(r rune) rune {
			if isControl(r) {
				return '?'
			}
			return r
		}, key), "?"), func(t *testing.T) {
			z := newFakeZenodo(t)
			z.add("1", key, []byte("data"))
			var logs bytes.Buffer
			opts, _ := testOptions(t, z, "1")
			opts.Logger = messageLogger(func(msg string) { logs.WriteString(msg) })
			_, err := Download(context.Background(), opts)
			if err == nil {
				t.Fatal("Download accepted the key")
			}
			if msg := err.Error() + logs.String(); strings.IndexFunc(msg, isControl) >= 0 || !utf8Valid(msg) {
				t.Errorf("message echoes the key raw: %q", msg)
			}
			if entries, _ := os.ReadDir(opts.Dest); len(entries) != 0 {
				t.Errorf("Dest holds %v", entries)
			}
		})
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// TestBadRedirectIsPermanent: a redirect to another scheme, or a loop, is
// not retried as if the network had failed.
func TestBadRedirectIsPermanent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		location func(z *fakeZenodo) string
		want     string
	}{
		{"file", func(*fakeZenodo) string { return "file:///etc/passwd" }, "not http or https"},
		{"ftp", func(*fakeZenodo) string { return "ftp://127.0.0.1/x.zip" }, "not http or https"},
		{"loop", func(z *fakeZenodo) string { return z.files.URL + "/dl/1/x.zip" }, "redirect loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := newFakeZenodo(t)
			f := z.add("1", "x.zip", []byte("data"), func(f *fakeFile) { f.location = tc.location(z) })
			opts, w := testOptions(t, z, "1")
			_, err := Download(context.Background(), opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Download = %v, want an error saying %q", err, tc.want)
			}
			if n := len(w.all()); n != 0 {
				t.Errorf("retried %d times", n)
			}
			if tc.name != "loop" && z.fileHits(f) != 1 {
				t.Errorf("file asked %d times, want once", z.fileHits(f))
			}
			wantAbsent(t, filepath.Join(opts.Dest, "x.zip.part"))
		})
	}
}

// TestConceptRecordResolvesToVersion: asking for a concept fetches its
// newest version, says which, and holds the pins to that version.
func TestConceptRecordResolvesToVersion(t *testing.T) {
	data := []byte("version two")
	newZ := func(t *testing.T) *fakeZenodo {
		z := newFakeZenodo(t)
		z.add("11", "data.zip", []byte("version one"))
		z.add("12", "data.zip", data)
		z.concept("10", "12")
		return z
	}
	for _, tc := range []struct {
		name    string
		asked   string
		pins    []Pin
		changed bool
	}{
		{"unpinned concept", "10", nil, false},
		{"concept DOI, pinned to the newest version", "10.5281/zenodo.10", []Pin{{Record: "12", Concept: "10", Key: "data.zip", Size: -1, MD5: md5hex(data)}}, false},
		{"zenodo.org/doi form", "https://zenodo.org/doi/10.5281/zenodo.10", []Pin{{Record: "12", Key: "data.zip", Size: -1, MD5: md5hex(data)}}, false},
		{"concept pinned to an older version", "10", []Pin{{Record: "11", Concept: "10", Key: "data.zip", Size: -1, MD5: md5hex([]byte("version one"))}}, true},
		{"pin of the version, wrong MD5", "10", []Pin{{Record: "12", Key: "data.zip", Size: -1, MD5: md5hex([]byte("other"))}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := newZ(t)
			opts, _ := testOptions(t, z, tc.asked)
			if tc.pins != nil {
				opts.Pins = tc.pins
			}
			var logs strings.Builder
			var mu sync.Mutex
			opts.Logger = messageLogger(func(msg string) {
				mu.Lock()
				defer mu.Unlock()
				logs.WriteString(msg)
			})
			res, err := Download(context.Background(), opts)
			if tc.changed {
				if !errors.Is(err, ErrRecordChanged) {
					t.Fatalf("Download = %v, want ErrRecordChanged", err)
				}
				wantAbsent(t, filepath.Join(opts.Dest, "data.zip"))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].Record != "12" || res[0].Concept != "10" {
				t.Fatalf("results %+v, want data.zip of record 12, concept 10", res)
			}
			wantFile(t, opts.Dest, "data.zip", data)
			if !strings.Contains(logs.String(), "concept") || !strings.Contains(logs.String(), " 12") {
				t.Errorf("the version fetched was not said: %q", logs.String())
			}
		})
	}
}

// TestSnapshotConceptHeldToPins: the snapshot's concept ID, once Zenodo has a
// newer version, fails on the published pins instead of passing unpinned.
func TestSnapshotConceptHeldToPins(t *testing.T) {
	z := newFakeZenodo(t)
	z.add("23333600", "mcp-atlas-audit-20261013-public.zip", []byte("a newer audit"))
	z.concept("23333515", "23333600")
	opts, _ := testOptions(t, z, "10.5281/zenodo.23333515")
	opts.Pins = nil // the snapshot's
	_, err := Download(context.Background(), opts)
	if !errors.Is(err, ErrRecordChanged) || !strings.Contains(err.Error(), "23333600") || !strings.Contains(err.Error(), "23333516") {
		t.Fatalf("Download = %v, want ErrRecordChanged naming versions 23333600 and 23333516", err)
	}
}

func TestUserAgent(t *testing.T) {
	z := newFakeZenodo(t)
	z.add("1", "x.zip", []byte("data"))
	opts, _ := testOptions(t, z, "1")
	mustDownload(t, opts)
	uas := z.seenUserAgents()
	if len(uas) == 0 {
		t.Fatal("no request seen")
	}
	for _, ua := range uas {
		if !strings.HasPrefix(ua, "atlas-reproduce/"+buildinfo.Read().Version) || !strings.Contains(ua, ProjectURL) {
			t.Errorf("User-Agent %q lacks the version or %s", ua, ProjectURL)
		}
	}
}

// TestFailedDownloadLeavesNoEmptyPart: a file that never sent a byte leaves
// nothing behind to resume from.
func TestFailedDownloadLeavesNoEmptyPart(t *testing.T) {
	z := newFakeZenodo(t)
	z.add("1", "x.zip", []byte("data"), func(f *fakeFile) { f.fail = []int{403} })
	opts, _ := testOptions(t, z, "1")
	if _, err := Download(context.Background(), opts); err == nil {
		t.Fatal("Download succeeded")
	}
	if entries, _ := os.ReadDir(opts.Dest); len(entries) != 0 {
		t.Fatalf("Dest holds %v", entries)
	}
}

// TestRecordIsOneSet: a record's files appear together or not at all; the
// verified ones wait as .part and are not downloaded again.
func TestRecordIsOneSet(t *testing.T) {
	z := newFakeZenodo(t)
	a := z.add("1", "a.zip", []byte("first file"))
	z.add("1", "b.zip", []byte("second file"), func(f *fakeFile) { f.fail = []int{403} })
	opts, _ := testOptions(t, z, "1")
	if _, err := Download(context.Background(), opts); err == nil {
		t.Fatal("Download succeeded")
	}
	wantAbsent(t, filepath.Join(opts.Dest, "a.zip"))
	if _, err := os.Stat(filepath.Join(opts.Dest, "a.zip.part")); err != nil {
		t.Fatalf("the verified file was not kept for the next run: %v", err)
	}
	res := mustDownload(t, opts)
	if len(res) != 2 {
		t.Fatalf("results %+v", res)
	}
	wantFile(t, opts.Dest, "a.zip", []byte("first file"))
	wantFile(t, opts.Dest, "b.zip", []byte("second file"))
	if n := z.fileHits(a); n != 1 {
		t.Errorf("a.zip downloaded %d times, want once", n)
	}
}

// TestSecondFetcherRefused: one writer per destination.
func TestSecondFetcherRefused(t *testing.T) {
	z := newFakeZenodo(t)
	z.add("1", "x.zip", []byte("data"))
	opts, _ := testOptions(t, z, "1")
	held, err := outset.Open(opts.Dest)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = Download(context.Background(), opts)
	var le *outset.LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("Download = %v, want *outset.LockedError naming pid %d", err, os.Getpid())
	}
}
