package outtext

import (
	"bytes"
	"testing"
)

func TestLimitedBuffer(t *testing.T) {
	var b bytes.Buffer
	l := &LimitedBuffer{B: &b, Max: 5}
	for _, w := range []string{"abc", "defg", "hij"} {
		if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v: a write past the bound must still succeed", w, n, err)
		}
	}
	if b.String() != "abcde" {
		t.Errorf("kept %q, want the first 5 bytes", b.String())
	}
}

func TestFirstLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"one\ntwo\n", 3, "one | two"},
		{"\n a\nb\nc\nd\n", 2, "a | b | ... (2 more lines)"},
		{"", 1, ""},
	} {
		if got := FirstLines(tc.in, tc.n); got != tc.want {
			t.Errorf("FirstLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
