package tables

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

func TestAppendHexHash(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var all Hash
	for i := range all {
		all[i] = byte(i * 8) // spread over the byte range
	}
	hashes := []Hash{{}, all, {0xff, 0x0f, 0xf0, 0x10}}
	for range 100 {
		var h Hash
		for i := range h {
			h[i] = byte(r.Uint32())
		}
		hashes = append(hashes, h)
	}
	for i := range 256 {
		var h Hash
		h[i%len(h)] = byte(i)
		hashes = append(hashes, h)
	}
	prefix := []byte("x")
	for _, h := range hashes {
		got := appendHexHash(append([]byte(nil), prefix...), &h)
		if want := "x" + hex.EncodeToString(h[:]); string(got) != want {
			t.Fatalf("appendHexHash(%x) = %q, want %q", h, got, want)
		}
	}
}

func BenchmarkAppendHexHash(b *testing.B) {
	hashes := make([]Hash, 4096)
	for i := range hashes {
		hashes[i][0], hashes[i][31] = byte(i), byte(i>>8)
	}
	buf := make([]byte, 0, 64*len(hashes))
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for i := range hashes {
				buf = appendHexHash(buf, &hashes[i])
			}
		}
	})
	b.Run("encoding/hex", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for i := range hashes {
				buf = hex.AppendEncode(buf, hashes[i][:])
			}
		}
	})
}
