package gunzip

import (
	"bytes"
	"testing"
)

// TestWindowBound holds the window's invariant that lets copyMatch8 store
// without bounds checks: a match of any length at any distance of eight or
// more, starting at the last position decoding may start one (wlimit-1),
// writes nothing past winSize, and copies as the byte-at-a-time overlap
// copy of deflate does. The window is a slice of a larger buffer whose
// tail is a guard: a store past winSize changes it.
func TestWindowBound(t *testing.T) {
	const guard = 64
	wlimit := history + outSize
	if winSize < wlimit+maxMatch+16 {
		t.Fatalf("winSize %d leaves less than maxMatch+16 bytes past the limit %d", winSize, wlimit)
	}
	buf := make([]byte, winSize+guard)
	want := make([]byte, winSize)
	for _, w := range []int{wlimit - 1, wlimit - 8, wlimit - 17, history} {
		for length := 3; length <= maxMatch; length++ {
			for _, d := range []int{8, 9, 15, 16, 17, length, length + 1, history} {
				if d > w {
					continue
				}
				for i := range buf {
					buf[i] = byte(i*7 + i>>8)
				}
				copy(want, buf[:winSize])
				for i := 0; i < length; i++ {
					want[w+i] = want[w-d+i]
				}
				guardBefore := bytes.Clone(buf[winSize:])
				win := buf[:winSize:winSize]
				copyMatch8(win, w, w-d, w+length)
				if !bytes.Equal(buf[winSize:], guardBefore) {
					t.Fatalf("w=%d length=%d d=%d: a store past winSize", w, length, d)
				}
				if !bytes.Equal(win[:w+length], want[:w+length]) {
					t.Fatalf("w=%d length=%d d=%d: the match is not copied as deflate copies it", w, length, d)
				}
			}
		}
	}
}
