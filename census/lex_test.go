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
