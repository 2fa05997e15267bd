package probe

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// TestReplaceInvalidUTF8 against CPython's bytes.decode("utf-8", "replace").
func TestReplaceInvalidUTF8(t *testing.T) {
	inputs := [][]byte{
		[]byte("A\xff\xfeB\xe2\x82C"), []byte("plain"), {}, []byte("\xe0\x80\x80"), []byte("\xed\xa0\x80"),
		[]byte("\xf0\x90\x80"), []byte("\xf4\x90\x80\x80"), []byte("\xc0\xaf"), []byte("\xf8\x88\x80\x80\x80"),
		[]byte("\xe1\x80"), []byte("\xf1\x80\x80"), []byte("a\x80b\xbf"), []byte("\xef\xbf\xbd"), []byte("\xf3"),
	}
	// Random strings over the bytes that make the cases.
	alphabet := []byte("a\x80\x8f\x90\x9f\xa0\xbf\xc0\xc2\xdf\xe0\xe1\xed\xee\xef\xf0\xf1\xf4\xf5\xff")
	seed := uint32(1)
	for range 2000 {
		b := make([]byte, 1+seed%9)
		for i := range b {
			seed = seed*1664525 + 1013904223
			b[i] = alphabet[(seed>>16)%uint32(len(alphabet))]
		}
		inputs = append(inputs, b)
	}
	var in strings.Builder
	for _, b := range inputs {
		fmt.Fprintf(&in, "%x\n", b)
	}
	cmd := exec.Command(testenv.Python3(t), "-c", `import sys
for line in sys.stdin:
    sys.stdout.write(bytes.fromhex(line.strip()).decode("utf-8", "replace").encode("utf-8").hex() + "\n")`)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(want) != len(inputs) {
		t.Fatalf("%d answers from python3 for %d inputs", len(want), len(inputs))
	}
	for i, b := range inputs {
		got := ReplaceInvalidUTF8(b)
		if fmt.Sprintf("%x", got) != want[i] || !utf8.Valid(got) {
			t.Errorf("%q: got %q, python3 %s", b, got, want[i])
		}
	}
}

// FuzzReplaceInvalidUTF8: the result is valid UTF-8, valid input comes back
// unchanged, and every valid sequence of the input survives in order.
func FuzzReplaceInvalidUTF8(f *testing.F) {
	for _, s := range []string{"A\xff\xfeB\xe2\x82C", "", "plain", "\xf0\x90\x80", "\xed\xa0\x80x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := ReplaceInvalidUTF8(b)
		if !utf8.Valid(got) {
			t.Fatalf("%q -> %q: not valid", b, got)
		}
		if utf8.Valid(b) && string(got) != string(b) {
			t.Fatalf("valid %q changed to %q", b, got)
		}
		// Dropping the replacements from the output and the invalid
		// bytes from the input leaves the same text.
		var kept []rune
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if r != utf8.RuneError || n > 1 {
				kept = append(kept, r)
			}
			i += n
		}
		if want := strings.ReplaceAll(string(kept), "\uFFFD", ""); strings.ReplaceAll(string(got), "\uFFFD", "") != want {
			t.Fatalf("%q -> %q: valid text changed", b, got)
		}
	})
}
