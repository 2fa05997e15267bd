package source

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"
)

func writeZip(t *testing.T, p string, members map[string]string) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range members {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func read(t *testing.T, s *Source, name string) (string, string) {
	t.Helper()
	f, err := s.Open(name)
	if err != nil {
		t.Fatalf("Open(%s): %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != f.Size {
		t.Errorf("%s: Size %d, read %d", name, f.Size, len(b))
	}
	return string(b), f.Location
}

func TestFolderZipAndDirectZip(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "loose.jsonl"), []byte("loose"), 0o644)
	z := filepath.Join(dir, "archive.zip")
	writeZip(t, z, map[string]string{"deep/nested/in.jsonl.gz": "zipped", "loose.jsonl": "shadowed"})

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if body, loc := read(t, s, "loose.jsonl"); body != "loose" || !strings.HasSuffix(loc, "loose.jsonl") {
		t.Errorf("loose file: %q at %s", body, loc)
	}
	if body, loc := read(t, s, "in.jsonl.gz"); body != "zipped" || !strings.HasSuffix(loc, "archive.zip!deep/nested/in.jsonl.gz") {
		t.Errorf("zip member: %q at %s", body, loc)
	}
	var nf *NotFoundError
	if _, err := s.Open("missing.jsonl"); !errors.As(err, &nf) || !strings.Contains(err.Error(), "archive.zip") {
		t.Errorf("missing file: %v", err)
	}

	direct, err := Open(z)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if body, _ := read(t, direct, "loose.jsonl"); body != "shadowed" {
		t.Errorf("direct zip member: %q", body)
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.zip")
	os.WriteFile(bad, []byte("not a zip"), 0o644)
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), "bad.zip") {
		t.Errorf("Open(not a zip) = %v", err)
	}
	if _, err := Open(filepath.Join(dir, "nope")); err == nil {
		t.Error("Open(missing path) succeeded")
	}
	twice := filepath.Join(t.TempDir(), "twice.zip")
	writeZip(t, twice, map[string]string{"a/x.jsonl": "1", "b/x.jsonl": "2"})
	s, err := Open(twice)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Open("x.jsonl"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("ambiguous member: %v", err)
	}
}

// TestMemberNamesQuoted: a member name holding control characters (a
// terminal escape, a newline) reaches neither the location nor the "holds
// it twice" error raw; a plain name is left as it is.
func TestMemberNamesQuoted(t *testing.T) {
	dir := t.TempDir()
	evil := "x\x1b]0;pwned\x07\n/servers.jsonl"
	writeZip(t, filepath.Join(dir, "a.zip"), map[string]string{
		evil:                       "{}\n",
		"plain/server_tools.jsonl": "{}\n",
	})
	writeZip(t, filepath.Join(dir, "b.zip"), map[string]string{
		"p\x1b[31m/candidates_remotes.jsonl": "",
		"q\r/candidates_remotes.jsonl":       "",
	})
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, loc := read(t, s, "servers.jsonl")
	if strings.ContainsAny(loc, "\x1b\x07\n") || !strings.Contains(loc, `\x1b]0;pwned\a\n`) {
		t.Errorf("location %q holds control characters raw, or is not quoted", loc)
	}
	if _, loc := read(t, s, "server_tools.jsonl"); loc != filepath.Join(dir, "a.zip")+"!plain/server_tools.jsonl" {
		t.Errorf("plain location %q", loc)
	}
	_, err = s.Open("candidates_remotes.jsonl")
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\r") || !strings.Contains(err.Error(), "holds it twice") {
		t.Errorf("err = %q, want a quoted 'holds it twice'", err)
	}
}
