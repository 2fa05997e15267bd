//go:build !purego

package gunzip

import "unsafe"

// copyMatch8 copies the match win[src:src+(end-w)] to win[w:end], with
// d = w-src >= 8, eight bytes per store and sixteen first: the stores may
// run up to max(w+16, end+8) bytes, past end, which the window's tail
// leaves room for (see winSize). No bounds are checked; the purego build
// is the same copy with them.
func copyMatch8(win []byte, w, src, end int) {
	base := unsafe.Pointer(unsafe.SliceData(win))
	*(*uint64)(unsafe.Add(base, w)) = *(*uint64)(unsafe.Add(base, src))
	*(*uint64)(unsafe.Add(base, w+8)) = *(*uint64)(unsafe.Add(base, src+8))
	for w, src = w+16, src+16; w < end; w, src = w+8, src+8 {
		*(*uint64)(unsafe.Add(base, w)) = *(*uint64)(unsafe.Add(base, src))
	}
}
