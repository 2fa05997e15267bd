package census

import (
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
