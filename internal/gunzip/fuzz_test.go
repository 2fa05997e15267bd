package gunzip

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// fuzzCap is the most output either decoder is read for, so that a small
// input that inflates hugely cannot exhaust memory.
const fuzzCap = 1 << 20

// readCapped reads r to its end or to more than limit bytes, whichever is
// first; capped reports the latter, and out then holds limit bytes.
func readCapped(r io.Reader, out []byte, limit int) (_ []byte, capped bool, err error) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if len(out) > limit {
			return out[:limit], true, nil
		}
		if err == io.EOF {
			return out, false, nil
		}
		if err != nil {
			return out, false, err
		}
	}
}

// headerQuirk looks at a member's header at the start of b for the two
// places where compress/gzip departs from RFC 1952 on purpose: it ignores
// the reserved flag bits (which RFC 1952 and this package reject), and it
// rejects a name or comment of 512 bytes or more (which this package
// reads).
func headerQuirk(b []byte) (reserved, long bool) {
	if len(b) < 10 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 {
		return false, false
	}
	flg := b[3]
	if flg&0xe0 != 0 {
		return true, false
	}
	p := 10
	if flg&flagExtra != 0 {
		if p+2 > len(b) {
			return false, false
		}
		p += 2 + (int(b[p]) | int(b[p+1])<<8)
	}
	for _, f := range []byte{flagName, flagComment} {
		if flg&f == 0 || p >= len(b) {
			continue
		}
		i := bytes.IndexByte(b[p:], 0)
		if i < 0 {
			return false, false // unterminated: both fail
		}
		if i >= 511 {
			return false, true
		}
		p += i + 1
	}
	return false, false
}

// oracle decodes src with compress/gzip member by member, as its
// multistream mode does, but holding headers to RFC 1952's reserved
// flags. skip reports a header compress/gzip rejects for a long name or
// comment.
func oracle(src []byte) (out []byte, capped, skip bool, err error) {
	r := bytes.NewReader(src)
	br := bufio.NewReader(r)
	var z *gzip.Reader
	for {
		off := len(src) - r.Len() - br.Buffered()
		reserved, long := headerQuirk(src[off:])
		if long {
			return out, false, true, nil
		}
		if reserved {
			return out, false, false, gzip.ErrHeader
		}
		if z == nil {
			z, err = gzip.NewReader(br)
			if err != nil {
				return out, false, false, err
			}
		} else if err = z.Reset(br); err == io.EOF {
			return out, false, false, nil
		} else if err != nil {
			return out, false, false, err
		}
		z.Multistream(false)
		if out, capped, err = readCapped(z, out, fuzzCap); capped || err != nil {
			return out, capped, false, err
		}
	}
}

// FuzzReader holds gunzip to compress/gzip: where it decodes a stream,
// gunzip gives the same bytes; where it fails, gunzip fails.
func FuzzReader(f *testing.F) {
	text := []byte("fuzz seed text, fuzz seed text; {\"id\":1,\"name\":\"x\"}\n")
	long := jsonLines(20000, 90)
	for _, level := range []int{-2, 0, 1, 6, 9} {
		f.Add(stdGzip(f, text, level))
		f.Add(kGzip(f, long, level))
	}
	f.Add(stdGzip(f, nil, 6))
	one := stdGzip(f, text, 6)
	f.Add(append(append([]byte{}, one...), stdGzip(f, text[:9], 1)...))
	f.Add(append(append([]byte{}, one...), 0x1f))
	f.Add(append(append([]byte{}, one...), "garbage"...))
	f.Add(one[:len(one)-5])
	f.Add(one[:20])
	flipped := bytes.Clone(one)
	flipped[15] ^= 4
	f.Add(flipped)
	f.Add(withHeaderF(header(flagName|flagComment|flagExtra|flagHdrCRC, []byte("xy"), "n", "c", -1), one))
	f.Add(withHeaderF(header(flagHdrCRC, nil, "", "", 1), one))
	var w bitWriter
	w.bits(0b011, 3)
	w.fixedSym('a')
	w.fixedSym(257)
	w.fixedDist(1)
	w.fixedSym(256)
	f.Add(gzipRaw(w.bytes(), []byte("aaaa")))
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0})

	f.Fuzz(func(t *testing.T, src []byte) {
		want, wcapped, skip, werr := oracle(src)
		if skip {
			return
		}
		var got []byte
		var gcapped bool
		z, gerr := NewReader(bytes.NewReader(src))
		if gerr == nil {
			got, gcapped, gerr = readCapped(z, nil, fuzzCap)
		}
		switch {
		case wcapped && gcapped:
			if !bytes.Equal(got, want) {
				t.Fatalf("the first %d bytes differ at %d", fuzzCap, firstDiff(got, want))
			}
		case wcapped:
			if gerr == nil {
				t.Fatalf("gunzip ends after %d bytes, compress/gzip gives over %d", len(got), fuzzCap)
			}
		case gcapped:
			if werr == nil || len(want)+outSize < fuzzCap {
				t.Fatalf("gunzip gives over %d bytes, compress/gzip %d and %v", fuzzCap, len(want), werr)
			}
		case werr == nil:
			if gerr != nil {
				t.Fatalf("gunzip: %v; compress/gzip decodes %d bytes", gerr, len(want))
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("gunzip gives %d bytes, compress/gzip %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
		default:
			if gerr == nil {
				t.Fatalf("gunzip decodes %d bytes without error; compress/gzip: %v", len(got), werr)
			}
		}
	})
}

// withHeaderF replaces member's 10-byte plain header with hdr.
func withHeaderF(hdr, member []byte) []byte {
	return append(append([]byte{}, hdr...), member[10:]...)
}
