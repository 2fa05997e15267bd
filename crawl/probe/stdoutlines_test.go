package probe

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestMessageLines(t *testing.T) {
	long := "{" + strings.Repeat("x", 200<<10) + "}\n"
	for _, tc := range []struct {
		name, in, want string
		skipped        int
	}{
		{"banner first", "Server started on stdio\n{\"a\":1}\n", "{\"a\":1}\n", 1},
		{"banners between", "{\"a\":1}\nwarn: x\n  {\"b\":2}\nnot json {\n", "{\"a\":1}\n  {\"b\":2}\n", 2},
		{"blank lines pass", "\n{\"a\":1}\n\n", "\n{\"a\":1}\n\n", 0},
		{"a batch passes", "[{\"a\":1}]\n", "[{\"a\":1}]\n", 0},
		{"no final newline", "hello\n{\"a\":1}", "{\"a\":1}", 1},
		{"a long banner", strings.Repeat("b", 200<<10) + "\n{\"a\":1}\n", "{\"a\":1}\n", 1},
		{"a long message", "x\n" + long, long, 1},
		{"nothing", "", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMessageLines(iotest.OneByteReader(strings.NewReader(tc.in)))
			got, err := io.ReadAll(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("passed %q, want %q", trunc(string(got)), trunc(tc.want))
			}
			if m.Skipped != tc.skipped {
				t.Errorf("skipped %d lines, want %d", m.Skipped, tc.skipped)
			}
		})
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
