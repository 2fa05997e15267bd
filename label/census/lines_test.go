package census

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 3<<20)
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"bare carriage return does not split", "a\rb\nc\r\n", []string{"a\rb", "c\r"}},
		{"final line without newline", "a\n\nb", []string{"a", "", "b"}},
		{"line longer than the buffer", "s\n" + long + "\nt\n", []string{"s", long, "t"}},
	}
	for _, tc := range tests {
		lr := NewLineReader(strings.NewReader(tc.in))
		var got []string
		for {
			line, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got = append(got, string(line))
			if lr.Line() != int64(len(got)) {
				t.Fatalf("%s: Line() = %d after %d lines", tc.name, lr.Line(), len(got))
			}
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %d lines, want %d", tc.name, len(got), len(tc.want))
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: line %d = %.20q, want %.20q", tc.name, i+1, got[i], tc.want[i])
			}
		}
	}
}

// TestLineReaderMaxLine: a line over the limit, shorter or longer than the
// buffer, last or not, is reported with its number and whole length; a line
// of exactly the limit passes.
func TestLineReaderMaxLine(t *testing.T) {
	big := strings.Repeat("y", 3<<20)
	tests := []struct {
		name       string
		in         string
		max        int
		line, size int64 // 0: every line passes
	}{
		{"short line over", "a\n" + strings.Repeat("x", 101) + "\nb\n", 100, 2, 101},
		{"short line at the limit", "a\n" + strings.Repeat("x", 100) + "\nb", 100, 0, 0},
		{"long line over, limit below the buffer", "a\nb\n" + big + "\nc\n", 1000, 3, int64(len(big))},
		{"long line over, limit above the buffer", "a\n" + big + "\n", 2 << 20, 2, int64(len(big))},
		{"long last line without newline", "a\n" + big, 2 << 20, 2, int64(len(big))},
		{"long line at the limit", "a\n" + big + "\nb\n", len(big), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := NewLineReader(strings.NewReader(tt.in))
			lr.MaxLine = tt.max
			var err error
			for err == nil {
				_, err = lr.Next()
			}
			var tl *LineTooLongError
			switch {
			case tt.line == 0 && err != io.EOF:
				t.Fatalf("err = %v, want none", err)
			case tt.line != 0 && (!errors.As(err, &tl) || tl.Line != tt.line || tl.Size != tt.size || tl.Max != tt.max):
				t.Fatalf("err = %v, want line %d of %d bytes", err, tt.line, tt.size)
			}
		})
	}
}
