package openreg

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenGunzipped reads a plain file as it is, a .gz file inflated, and
// names the file when a .gz one is not gzip.
func TestOpenGunzipped(t *testing.T) {
	dir := t.TempDir()
	const text = "{\"server_id\": \"a\"}\n{\"server_id\": \"b\"}\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"servers.jsonl":     []byte(text),
		"servers.jsonl.gz":  gz.Bytes(),
		"notgzip.jsonl.gz":  []byte(text),
		"gzip-named-plain":  gz.Bytes(),
		"truncated.json.gz": gz.Bytes()[:gz.Len()/2],
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		want    string // the bytes read, when no error is wanted
		wantErr bool
	}{
		{"servers.jsonl", text, false},
		{"servers.jsonl.gz", text, false},
		{"gzip-named-plain", gz.String(), false}, // by name: not inflated
		{"notgzip.jsonl.gz", "", true},
		{"truncated.json.gz", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			r, err := OpenGunzipped(path)
			var got []byte
			if err == nil {
				got, err = io.ReadAll(r)
				if cerr := r.Close(); cerr != nil {
					t.Errorf("Close: %v", cerr)
				}
			}
			if tc.wantErr {
				if err == nil {
					t.Fatalf("read %q, want an error", got)
				}
				if tc.name == "notgzip.jsonl.gz" && !strings.Contains(err.Error(), path) {
					t.Errorf("error %q does not name %s", err, path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("read %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := OpenGunzipped(dir); err == nil {
		t.Error("a folder was opened")
	}
}
