package hashverify

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestParseSHA256Sums(t *testing.T) {
	h := strings.Repeat("ab", 32)
	tests := []struct {
		in      string
		want    Manifest
		wantErr string
	}{
		{h + "  server_tools.jsonl.gz\n", Manifest{"server_tools.jsonl.gz": h}, ""},
		{strings.ToUpper(h) + " *dir/servers.jsonl.gz\r\n# c\n\n", Manifest{"servers.jsonl.gz": h}, ""},
		{"abc  x\n", nil, "m:1: not a sha256sum line"},
		{strings.Repeat("zz", 32) + "  x\n", nil, "is not hexadecimal"},
		{"\n# only comments\n", nil, "no hashes"},
		{h + "  x\n" + strings.Repeat("cd", 32) + "  x\n", nil, "m:2: x is listed twice"},
		// sha256sum --tag (BSD) lines, alone or mixed with GNU ones.
		{"SHA256 (server_tools.jsonl.gz) = " + h + "\n", Manifest{"server_tools.jsonl.gz": h}, ""},
		{"SHA256 (dir/a (1).gz) = " + strings.ToUpper(h) + "\r\n" + h + "  b\n", Manifest{"a (1).gz": h, "b": h}, ""},
		{"SHA256 (x) = abc\n", nil, "m:1: not a sha256sum line"},
		{"SHA256 (x) " + h + "\n", nil, "m:1: not a sha256sum line"},
		{"MD5 (x) = " + strings.Repeat("ab", 16) + "\n", nil, "m:1: a MD5 line: the manifest must hold SHA-256"},
		{"SHA256 () = " + h + "\n", nil, "m:1: not a sha256sum line"},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got, err := ParseSHA256Sums(strings.NewReader(tc.in), "m")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("ParseSHA256Sums(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("ParseSHA256Sums(%q) = %v, %v", tc.in, got, err)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("ParseSHA256Sums(%q)[%s] = %s, want %s", tc.in, k, got[k], v)
				}
			}
		})
	}
}

func TestReaderAndCheck(t *testing.T) {
	data := strings.Repeat("census ", 10000)
	r := NewReader(strings.NewReader(data))
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(data))
	want := hex.EncodeToString(sum[:])
	if r.Sum() != want || r.N() != int64(len(data)) {
		t.Fatalf("Sum = %s (%d bytes), want %s (%d)", r.Sum(), r.N(), want, len(data))
	}
	m := Manifest{"f": want}
	if err := m.Check("f", r.Sum()); err != nil {
		t.Fatal(err)
	}
	var mm *MismatchError
	if err := (Manifest{"f": strings.Repeat("0", 64)}).Check("f", want); !errors.As(err, &mm) || mm.Actual != want {
		t.Fatalf("Check on a wrong hash = %v", err)
	}
	if err := m.Check("g", want); err == nil {
		t.Fatal("Check of an unlisted file succeeded")
	}
	if !Pinned().IsPinned() || (Manifest{"f": want}).IsPinned() {
		t.Fatal("IsPinned is wrong")
	}
}
