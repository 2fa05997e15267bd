//go:build unix

package toolid

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadRefusesStrangeFiles: Read takes one JSON document from a regular
// file of bounded size, and refuses, at once and naming the file, trailing
// bytes, a FIFO (which would block open(2) for good), a device, and a file
// past MaxLockBytes.
func TestReadRefusesStrangeFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := New("s").Write(good); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := write("big.json", nil)
	if err := os.Truncate(big, MaxLockBytes+1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"valid", good, ""},
		{"trailing whitespace", write("ws.json", append(append([]byte{}, b...), "\n\n  "...)), ""},
		{"trailing garbage", write("garbage.json", append(append([]byte{}, b...), "garbage"...)), "more after the JSON document"},
		{"second document", write("two.json", append(append([]byte{}, b...), b...)), "more after the JSON document"},
		{"fifo", fifo, "not a regular file (a named pipe)"},
		{"device", zero, "not a regular file (a character device)"},
		{"too large", big, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Read(tc.path)
			switch {
			case tc.want == "" && (err != nil || f.ServerID != "s"):
				t.Errorf("Read: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path)):
				t.Errorf("err = %v, want one naming %s and saying %q", err, tc.path, tc.want)
			}
		})
	}
}
