package census

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSpecialMask checks the word-at-a-time scan against a byte loop: the
// lowest flagged byte must be the first special byte, and no flag at all
// must mean no special byte.
func TestSpecialMask(t *testing.T) {
	interesting := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', 0x23, '\\', 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff, 'a'}
	rng := rand.New(rand.NewPCG(3, 4))
	var w [8]byte
	for n := 0; n < 1_000_000; n++ {
		for i := range w {
			if rng.IntN(2) == 0 {
				w[i] = interesting[rng.IntN(len(interesting))]
			} else {
				w[i] = byte(rng.IntN(256))
			}
		}
		want := -1
		for i, c := range w {
			if strSpecial[c] {
				want = i
				break
			}
		}
		m := specialMask(binary.LittleEndian.Uint64(w[:]))
		got := -1
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != want {
			t.Fatalf("% x: first special byte %d, mask says %d", w, want, got)
		}
	}
}

func TestAppendUnescaped(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`plain`, "plain"},
		{`\"\\\/\b\f\n\r\t`, "\"\\/\b\f\n\r\t"},
		{`\u0041\u00e9\u4E2D`, "Aé中"},
		{`\ud83d\ude00`, "😀"},
		{`\ud800`, "\xed\xa0\x80"},
		{`\udfff\ud800`, "\xed\xbf\xbf\xed\xa0\x80"},
		{`\ud800\ud800\udc00`, "\xed\xa0\x80\U00010000"},
		{`\ud800\u0041`, "\xed\xa0\x80A"},
		{`\ud800\n`, "\xed\xa0\x80\n"},
		{`\u0000x\u001f`, "\x00x\x1f"},
		{`a\\ud800`, `a\ud800`},
	}
	for _, tt := range tests {
		if got := string(appendUnescaped(nil, []byte(tt.raw))); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.raw, got, tt.want)
		}
	}
}

// FuzzLexerValidated holds the readers of validated text (StringEnd,
// KeyValidated, SkipValidated) to the validating ones on every value the
// lexer accepts: the same ends, the same escape flags.
func FuzzLexerValidated(f *testing.F) {
	for _, s := range canonicalHostile() {
		if len(s) < 4096 {
			f.Add([]byte(s))
		}
	}
	for _, c := range trickyCases() {
		if len(c.line) < 4096 {
			f.Add([]byte(c.line))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var lx Lexer
		lx.Reset(in)
		p := lx.WS(0)
		end, err := lx.Skip(p, 0)
		if err != nil || lx.WS(end) != len(in) {
			return // validated text is a whole document
		}
		if got := lx.SkipValidated(p); got != end {
			t.Fatalf("SkipValidated ends at %d, Skip at %d\ninput %q", got, end, in)
		}
		checkValidated(t, &lx, p, 0)
	})
}

// checkValidated walks the accepted value at p comparing, at every string
// and member, the validated readers with the validating ones.
func checkValidated(t *testing.T, lx *Lexer, p, depth int) int {
	t.Helper()
	switch lx.At(p) {
	case '"':
		end, esc, _ := lx.String(p)
		if e2, esc2 := lx.StringEnd(p); e2 != end || esc2 != esc {
			t.Fatalf("StringEnd(%d) = %d, %v; String gives %d, %v\ninput %q", p, e2, esc2, end, esc, lx.Data())
		}
		return end
	case '{':
		p, done := lx.ObjOpen(p)
		for !done {
			end, esc, v, _ := lx.Key(p)
			if e2, esc2, v2 := lx.KeyValidated(p); e2 != end || esc2 != esc || v2 != v {
				t.Fatalf("KeyValidated(%d) = %d, %v, %d; Key gives %d, %v, %d\ninput %q", p, e2, esc2, v2, end, esc, v, lx.Data())
			}
			if s := lx.SkipValidated(v); s != checkValidated(t, lx, v, depth+1) {
				t.Fatalf("SkipValidated(%d) = %d disagrees\ninput %q", v, s, lx.Data())
			}
			end, _ = lx.Skip(v, depth+1)
			p, done, _ = lx.ObjNext(end)
		}
		return p
	case '[':
		p, done := lx.ArrOpen(p)
		for !done {
			checkValidated(t, lx, p, depth+1)
			end, _ := lx.Skip(p, depth+1)
			p, done, _ = lx.ArrNext(end)
		}
		return p
	}
	end, _ := lx.Skip(p, depth)
	return end
}
