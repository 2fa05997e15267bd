package classify

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fastPathPairs are the inputs where the ASCII fast path (ascii.go) can go
// wrong and random pairs rarely go: runs crossing the 8-byte words and the
// 64-byte blocks, pieces of every length up to a few blocks, every ASCII
// byte beside a form (the 0x20 fold maps some non-class bytes onto class
// bytes), non-ASCII bytes beside and inside runs, runs longer than any form,
// and the phrases across word and block edges and across the joint.
func fastPathPairs() [][2]string {
	var pairs [][2]string
	add := func(name, desc string) {
		pairs = append(pairs, [2]string{name, desc}, [2]string{desc, name})
	}
	forms := []string{"url", "to", "in", "destination_path", "Refund_Amount", "apiKey", "SQL", "monetary", "code"}
	fillers := []string{"x", " ", "-", "é", "_", "9", "\t"}
	// A form at every offset of a piece, on either side of the word and
	// block edges, with class and non-class fill around it.
	for _, f := range forms {
		for _, fill := range fillers {
			for off := 0; off <= 70; off++ {
				for _, tail := range []int{0, 1, 7, 8, 9} {
					add("n", strings.Repeat(fill, off)+f+strings.Repeat(fill, tail))
				}
			}
			for _, off := range []int{120, 121, 126, 127, 128, 129, 190, 191, 192} {
				add(strings.Repeat(fill, off)+f, f+strings.Repeat(fill, off))
			}
		}
	}
	// Pieces of every length up to three blocks: all class bytes (one run,
	// too long beyond 16), and a form at the end of a class run or after
	// a separator.
	for n := 0; n <= 200; n++ {
		add(strings.Repeat("a", n), "")
		add(strings.Repeat("b", n)+"url", strings.Repeat(" ", n)+"url")
		add("x", strings.Repeat("ab ", n/3)+strings.Repeat("c", n%3)+" path")
	}
	// Every ASCII byte on either side of a form.
	for b := 0; b < 0x80; b++ {
		c := string(rune(b))
		add(c+"url", "url"+c)
		add(c+"url"+c, "x"+c+"amount"+c+"in"+c)
		add("dir"+c+"path", c+c+"token"+c+c)
	}
	// Non-ASCII bytes beside and inside runs, in short and long pieces.
	for _, u := range []string{"ſ", "\u212A", "ı", "İ", "é", "日", "\u00a0", "\xed\xa0\x80", "\u0307"} {
		for _, w := range []string{"url", "secret", "token", "destination_path", "amount in", "currency code", "in"} {
			add(u+w, w+u)
			add(strings.Repeat("z", 60)+" "+w+u, u+w+" "+strings.Repeat("z", 60))
			if len(w) > 2 {
				add(w[:2]+u+w[2:], "q "+w[:1]+u+w[1:])
			}
		}
	}
	// Runs one longer than a form, and forms inside long runs.
	for _, f := range []string{"destination_path", "callback_url", "refund_amount"} {
		add(f+"s", "_"+f)
		add(strings.Repeat("y", 20)+f, f+strings.Repeat("y", 50))
		add(strings.Repeat("y", 63)+" "+f, strings.Repeat("y", 64)+" "+f)
	}
	// The phrases: one space only, at the edges, across the joint, and
	// folded, or split by non-ASCII look-alikes.
	for off := 0; off <= 66; off++ {
		pad := strings.Repeat(".", off)
		add("x", pad+"amount in")
		add("x", pad+"AMOUNT IN usd")
		add("x", pad+"currency code")
		add("x", pad+"amount  in")
		add("x", pad+"xamount in")
		add("x", pad+"currency codes")
		add("x", pad+"ámount in")
	}
	add("amount", "in")
	add("currency", "code")
	add("amount ", "in")
	add("", "in")
	add("", "code")
	return pairs
}

// TestFastPathCPython requires the fast path to agree with CPython, and
// with the exact matcher it bypasses, on fastPathPairs.
func TestFastPathCPython(t *testing.T) {
	pairs := fastPathPairs()
	want := runOracle(t, pairs)
	bad := 0
	for i, p := range pairs {
		got := Property(p[0], p[1])
		gotBytes := PropertyBytes([]byte(p[0]), []byte(p[1]))
		base := baselineProperty(p[0], p[1])
		ok := slices.Equal(labels(got), want[i]) || len(labels(got)) == 0 && len(want[i]) == 0
		if !ok || gotBytes != got || base != got {
			if bad++; bad <= 20 {
				t.Errorf("pair %d (%q, %q): Property %v, PropertyBytes %v, exact matcher %v, CPython %v",
					i, p[0], p[1], labels(got), labels(gotBytes), labels(base), want[i])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d pairs differ", bad, len(pairs))
	}
	t.Logf("%d pairs agree", len(pairs))
}

// TestFastPathTakesASCII pins which pieces the fast path takes: all-ASCII
// ones, whatever their length, and no others. A fast path that gave up on
// ASCII would still pass the differential tests, only slowly.
func TestFastPathTakesASCII(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"", true}, {"url", true}, {strings.Repeat("a b_", 50), true}, {"\x00\x7f", true},
		{"é", false}, {"url\xff", false}, {strings.Repeat("a", 100) + "é", false},
		{strings.Repeat("a", 64) + "\x80", false}, {"abcdefghijklmno\xc3\xa9", false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%.40q", tc.s), func(t *testing.T) {
			if _, ok := asciiPiece(tc.s); ok != tc.want {
				t.Errorf("asciiPiece(%q) ok = %v, want %v", tc.s, ok, tc.want)
			}
		})
	}
}

// TestLoadTail checks the overlapping loads against a byte loop at every
// length and offset.
func TestLoadTail(t *testing.T) {
	src := "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11"
	for n := 1; n <= len(src); n++ {
		s := src[:n]
		for i := 0; i < n; i++ {
			var want uint64
			for k := min(n, i+8) - 1; k >= i; k-- {
				want = want<<8 | uint64(s[k])
			}
			if got := load8(s, i); got != want {
				t.Errorf("load8(%d bytes, %d) = %#x, want %#x", n, i, got, want)
			}
		}
	}
}

// TestClassBytes checks the SWAR class test against asciiFold on every
// ASCII byte in every lane.
func TestClassBytes(t *testing.T) {
	for c := 0; c < 0x80; c++ {
		for lane := 0; lane < 8; lane++ {
			x := uint64(c) << (8 * lane)
			var want uint64
			if asciiFold[c] != 0 {
				want = 0x80 << (8 * lane)
			}
			// The other lanes hold the class byte 'a' and the non-class
			// byte '@', so a carry across lanes would show.
			for k := 0; k < 8; k++ {
				if k != lane {
					fill := uint64('@')
					if k%2 == 0 {
						fill = 'a'
						want |= 0x80 << (8 * k)
					}
					x |= fill << (8 * k)
				}
			}
			if got := classBytes(x); got != want {
				t.Errorf("classBytes(%s) = %#x, want %#x", fmt.Sprintf("%#x", x), got, want)
			}
		}
	}
}

// TestSurfaceFastPath compares Surface with the literal reference on the
// fast path's corners, and on surface words at every offset of ASCII
// descriptions with and without links.
func TestSurfaceFastPath(t *testing.T) {
	pairs := fastPathPairs()
	for _, w := range []string{"fetch", "Send", "DELETE file", "run script", "api_key", "refreshes token", "directories", "kubectl"} {
		for _, fill := range []string{"x", " ", ".", "_", "é"} {
			for off := 0; off <= 70; off++ {
				pad := strings.Repeat(fill, off)
				pairs = append(pairs,
					[2]string{"tool", pad + w},
					[2]string{"tool", pad + w + pad},
					[2]string{"tool", "see http://x/" + pad + w},
					[2]string{"tool", pad + w + " https://a.b " + w},
					[2]string{"x:", "//" + pad + w},
				)
			}
		}
	}
	bad := 0
	for _, p := range pairs {
		got, want := Surface([]byte(p[0]), []byte(p[1])), referenceSurface(p[0], p[1])
		if got != want {
			if bad++; bad <= 20 {
				t.Errorf("Surface(%q, %q) = %v, reference %v", p[0], p[1], got.IDs(), want.IDs())
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d pairs differ", bad, len(pairs))
	}
}
