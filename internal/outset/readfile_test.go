package outset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenFileAndReadFile(t *testing.T) {
	tests := []struct {
		name        string
		interrupted bool
	}{
		{"complete set", false},
		{"pending commit", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "report.json")
			if err := os.WriteFile(path, []byte("{}\n"), 0o666); err != nil {
				t.Fatal(err)
			}
			if tc.interrupted {
				if err := os.WriteFile(filepath.Join(dir, journalName), nil, 0o666); err != nil {
					t.Fatal(err)
				}
			}
			f, openErr := OpenFile(path)
			if f != nil {
				f.Close()
			}
			data, readErr := ReadFile(path)
			for _, err := range []error{openErr, readErr} {
				var ie *InterruptedError
				if tc.interrupted {
					if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), path+": ") {
						t.Errorf("err = %v, want *InterruptedError prefixed with %s", err, path)
					}
				} else if err != nil {
					t.Errorf("err = %v, want nil", err)
				}
			}
			if !tc.interrupted && string(data) != "{}\n" {
				t.Errorf("ReadFile = %q, want %q", data, "{}\n")
			}
		})
	}
}
