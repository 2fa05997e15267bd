//go:build purego

package gunzip

import "encoding/binary"

// copyMatch8 is the unsafe build's copy with every load and store bounds
// checked: the same stores, so a window too small for them panics here
// (go test -tags purego ./internal/gunzip).
func copyMatch8(win []byte, w, src, end int) {
	binary.LittleEndian.PutUint64(win[w:], binary.LittleEndian.Uint64(win[src:]))
	binary.LittleEndian.PutUint64(win[w+8:], binary.LittleEndian.Uint64(win[src+8:]))
	for w, src = w+16, src+16; w < end; w, src = w+8, src+8 {
		binary.LittleEndian.PutUint64(win[w:], binary.LittleEndian.Uint64(win[src:]))
	}
}
