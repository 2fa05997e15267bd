package gunzip

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"
)

// lighter reports a run that should use smaller inputs: -short, or the
// race detector, which slows this package's tests some sixfold.
func lighter() bool { return testing.Short() || raceBuild }

var raceBuild = func() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
}()

// --- data ---------------------------------------------------------------

// shape is a named, deterministic input to compress.
type shape struct {
	name string
	data []byte
}

// jsonLines is census-like JSON-lines text of about n bytes.
func jsonLines(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := []string{"server", "tool", "filesystem", "read_file", "path", "string", "github", "query", "description", "object", "npm", "pypi", "docker", "integer", "boolean"}
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"name":"%s-%s-%d","registry":"%s","stars":%d,"tools":[`,
			i, words[rng.IntN(len(words))], words[rng.IntN(len(words))], rng.IntN(100000), words[10+rng.IntN(3)], rng.IntN(50000))
		for t := rng.IntN(6); t >= 0; t-- {
			fmt.Fprintf(&b, `{"name":"%s_%s","description":"%s the %s of a %s","params":{"%s":"%s"}},`,
				words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))],
				words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[11+rng.IntN(4)])
		}
		b.WriteString("{}]}\n")
	}
	return b.Bytes()[:n]
}

func randomBytes(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// periodic repeats a random unit of the given period: every match is at
// that distance.
func periodic(n, period int, seed uint64) []byte {
	unit := randomBytes(period, seed)
	b := make([]byte, n)
	for i := range b {
		b[i] = unit[i%period]
	}
	return b
}

// mixed alternates stretches of text, random bytes and runs, so one
// stream holds stored, fixed and dynamic blocks.
func mixed(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 3))
	var b []byte
	for len(b) < n {
		k := 1 + rng.IntN(40000)
		switch rng.IntN(4) {
		case 0:
			b = append(b, jsonLines(k, rng.Uint64())...)
		case 1:
			b = append(b, randomBytes(k, rng.Uint64())...)
		case 2:
			b = append(b, bytes.Repeat([]byte{byte(rng.IntN(256))}, k)...)
		default:
			b = append(b, periodic(k, 2+rng.IntN(300), rng.Uint64())...)
		}
	}
	return b[:n]
}

// shapes are the inputs of the differential test. In a lighter run the
// largest is smaller, but still slides the window.
func shapes(short bool) []shape {
	big := 3 << 20
	if short {
		big = 700 << 10
	}
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog; "), 2000)
	s := []shape{
		{"empty", nil},
		{"one byte", []byte{'x'}},
		{"text repeats", text},
		{"random 100K", randomBytes(100<<10, 1)},
		{"run of one byte", bytes.Repeat([]byte{0xa5}, 300<<10)},
	}
	for p := 2; p <= 7; p++ {
		s = append(s, shape{fmt.Sprintf("period %d", p), periodic(40<<10, p, uint64(p))})
	}
	s = append(s,
		// Distance 32768 everywhere, and matches that straddle each
		// slide of the 256 KiB window.
		shape{"period 32768 across slides", periodic(700<<10, 32768, 9)},
		shape{"period 1000 across slides", periodic(600<<10, 1000, 10)},
		shape{"mixed across slides", mixed(900<<10, 11)},
		shape{"json lines large", jsonLines(big, 12)},
	)
	return s
}

// --- compressors and decoders ---------------------------------------------

func stdGzip(t testing.TB, data []byte, level int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func kGzip(t testing.TB, data []byte, level int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := kgzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gunzipAll decodes src with this package, reading to the end.
func gunzipAll(src io.Reader) ([]byte, error) {
	z, err := NewReader(src)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// stdAll decodes with compress/gzip, the oracle.
func stdAll(src []byte) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// kAll decodes with klauspost/compress/gzip, the reader this replaces.
func kAll(src []byte) ([]byte, error) {
	z, err := kgzip.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// --- 1. differential --------------------------------------------------------

func TestDifferential(t *testing.T) {
	stdLevels := []int{flate.HuffmanOnly, flate.NoCompression, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	kLevels := []int{kgzip.StatelessCompression, kflate.HuffmanOnly, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	light := lighter()
	for _, s := range shapes(light) {
		for _, c := range []struct {
			name   string
			levels []int
			gz     func(testing.TB, []byte, int) []byte
		}{{"std", stdLevels, stdGzip}, {"klauspost", kLevels, kGzip}} {
			for _, level := range c.levels {
				// A lighter run takes the large shapes at the levels
				// whose encoders differ most.
				if light && len(s.data) > 256<<10 && level >= 2 && level <= 8 && level != 6 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/%d", s.name, c.name, level), func(t *testing.T) {
					comp := c.gz(t, s.data, level)
					want, err := stdAll(comp)
					if err != nil {
						t.Fatalf("compress/gzip: %v", err)
					}
					if !bytes.Equal(want, s.data) {
						t.Fatal("compress/gzip does not give the input back")
					}
					got, err := gunzipAll(bytes.NewReader(comp))
					if err != nil {
						t.Fatalf("gunzip: %v", err)
					}
					if !bytes.Equal(got, s.data) {
						t.Fatalf("gunzip: %d bytes differ from the %d of the input, first at %d", len(got), len(s.data), firstDiff(got, s.data))
					}
					kgot, err := kAll(comp)
					if err != nil || !bytes.Equal(kgot, got) {
						t.Fatalf("klauspost differs: %v", err)
					}
				})
			}
		}
	}
}

// TestStoredBlocksOver64K checks NoCompression input larger than a stored
// block, whose LEN is at most 65535.
func TestStoredBlocksOver64K(t *testing.T) {
	data := randomBytes(200<<10+17, 20)
	comp := stdGzip(t, data, flate.NoCompression)
	if len(comp) < len(data) {
		t.Fatal("level 0 compressed: not stored blocks")
	}
	got, err := gunzipAll(bytes.NewReader(comp))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("err %v, equal %v", err, bytes.Equal(got, data))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// --- 2. read patterns -------------------------------------------------------

// readWith reads z in reads of n bytes (n 0: io.ReadAll).
func readWith(z io.Reader, n int) ([]byte, error) {
	if n == 0 {
		return io.ReadAll(z)
	}
	var out []byte
	p := make([]byte, n)
	for {
		k, err := z.Read(p)
		out = append(out, p[:k]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func TestReadPatterns(t *testing.T) {
	size := 600 << 10
	if lighter() {
		size = 300 << 10
	}
	data := mixed(size, 30)
	one := stdGzip(t, data, 6)
	// Three members, of levels with different block kinds.
	multi := append(append(stdGzip(t, data[:size/3], 0), stdGzip(t, data[size/3:size/2], -2)...), kGzip(t, data[size/2:], 9)...)
	inputs := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"OneByteReader", iotest.OneByteReader},
		{"HalfReader", iotest.HalfReader},
		{"DataErrReader", iotest.DataErrReader},
		{"DataErrReader(OneByteReader)", func(r io.Reader) io.Reader { return iotest.DataErrReader(iotest.OneByteReader(r)) }},
	}
	for _, stream := range []struct {
		name string
		comp []byte
	}{{"one member", one}, {"three members", multi}} {
		for _, in := range inputs {
			for _, n := range []int{0, 1, 7, 4093} {
				t.Run(fmt.Sprintf("%s/%s/read %d", stream.name, in.name, n), func(t *testing.T) {
					z, err := NewReader(in.wrap(bytes.NewReader(stream.comp)))
					if err != nil {
						t.Fatal(err)
					}
					got, err := readWith(z, n)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, data) {
						t.Fatalf("%d bytes, want %d, first difference at %d", len(got), len(data), firstDiff(got, data))
					}
					// EOF is sticky.
					if k, err := z.Read(make([]byte, 10)); k != 0 || err != io.EOF {
						t.Fatalf("after the end: %d, %v", k, err)
					}
				})
			}
		}
	}
}

// errAfter is an input that fails, not with EOF, after its data.
type errAfter struct {
	r   io.Reader
	err error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

// TestInputError checks a failing input's error reaches the caller.
func TestInputError(t *testing.T) {
	data := jsonLines(100<<10, 31)
	comp := stdGzip(t, data, 6)
	boom := errors.New("disk on fire")
	for _, cut := range []int{5, 30, len(comp) / 2, len(comp) - 4} {
		_, err := gunzipAll(&errAfter{bytes.NewReader(comp[:cut]), boom})
		if !errors.Is(err, boom) {
			t.Errorf("cut at %d: %v, want %v", cut, err, boom)
		}
	}
	_, err := gunzipAll(iotest.TimeoutReader(bytes.NewReader(comp)))
	if !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("TimeoutReader: %v", err)
	}
}

// TestStickyError checks a Read after an error gives the error again, and
// that an empty Read is harmless.
func TestStickyError(t *testing.T) {
	data := jsonLines(5000, 33)
	comp := stdGzip(t, data, 6)
	comp[len(comp)-1] ^= 1
	z, err := NewReader(bytes.NewReader(comp))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := z.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
	got, err := io.ReadAll(z)
	if !errors.Is(err, ErrChecksum) || !bytes.Equal(got, data) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	for range 3 {
		if n, err := z.Read(make([]byte, 100)); n != 0 || !errors.Is(err, ErrChecksum) {
			t.Fatalf("read after the error: %d, %v", n, err)
		}
	}
}

// --- 3. headers ---------------------------------------------------------------

// withHeader is a gzip member of data whose header is hdr.
func withHeader(t *testing.T, hdr []byte, data []byte) []byte {
	t.Helper()
	comp := stdGzip(t, data, 6)
	return append(append([]byte{}, hdr...), comp[10:]...)
}

// header builds a header with the given flags and fields; hcrc -1 computes
// the right header CRC when FHCRC is set.
func header(flg byte, extra []byte, name, comment string, hcrc int) []byte {
	h := []byte{0x1f, 0x8b, 8, flg, 1, 2, 3, 4, 0, 3}
	if flg&flagExtra != 0 {
		h = binary.LittleEndian.AppendUint16(h, uint16(len(extra)))
		h = append(h, extra...)
	}
	if flg&flagName != 0 {
		h = append(append(h, name...), 0)
	}
	if flg&flagComment != 0 {
		h = append(append(h, comment...), 0)
	}
	if flg&flagHdrCRC != 0 {
		c := uint16(crc32.ChecksumIEEE(h))
		if hcrc >= 0 {
			c = uint16(hcrc)
		}
		h = binary.LittleEndian.AppendUint16(h, c)
	}
	return h
}

func TestHeaders(t *testing.T) {
	data := []byte("header test data, header test data, header test data\n")
	good := header(flagName|flagComment|flagExtra|flagHdrCRC, []byte("ab\x00cd"), "file.json", "a comment", -1)
	badCRC := header(flagName|flagHdrCRC, nil, "file.json", "", 0)
	if bytes.Equal(good[len(good)-2:], []byte{0, 0}) {
		t.Fatal("test header's CRC happens to be 0")
	}
	var w bytes.Buffer
	gw := gzip.NewWriter(&w)
	gw.Name, gw.Comment, gw.Extra = "name.txt", "comment", []byte{'A', 'B', 2, 0, 1, 2}
	gw.Write(data)
	gw.Close()

	cases := []struct {
		name string
		comp []byte
		err  error // nil: decodes to data
		std  bool  // compress/gzip agrees on the outcome
	}{
		{"Writer with name, comment, extra", w.Bytes(), nil, true},
		{"FTEXT", withHeader(t, header(flagText, nil, "", "", -1), data), nil, true},
		{"FEXTRA empty", withHeader(t, header(flagExtra, nil, "", "", -1), data), nil, true},
		{"FEXTRA 35000 bytes", withHeader(t, header(flagExtra, bytes.Repeat([]byte{7}, 35000), "", "", -1), data), nil, true},
		{"FNAME empty", withHeader(t, header(flagName, nil, "", "", -1), data), nil, true},
		{"FNAME latin-1", withHeader(t, header(flagName, nil, "caf\xe9", "", -1), data), nil, true},
		{"FCOMMENT", withHeader(t, header(flagComment, nil, "", "x", -1), data), nil, true},
		{"all fields and FHCRC", withHeader(t, good, data), nil, true},
		{"FHCRC alone", withHeader(t, header(flagHdrCRC, nil, "", "", -1), data), nil, true},
		{"FHCRC wrong", withHeader(t, badCRC, data), ErrHeader, true},
		{"bad magic 0", withHeader(t, append([]byte{0x1e}, header(0, nil, "", "", -1)[1:]...), data), ErrHeader, true},
		{"bad magic 1", withHeader(t, append([]byte{0x1f, 0x8c}, header(0, nil, "", "", -1)[2:]...), data), ErrHeader, true},
		{"CM 7", withHeader(t, []byte{0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 3}, data), ErrHeader, true},
		{"CM 9", withHeader(t, []byte{0x1f, 0x8b, 9, 0, 0, 0, 0, 0, 0, 3}, data), ErrHeader, true},
		// compress/gzip ignores the reserved flags; RFC 1952 says a
		// decoder must give an error, as zlib does.
		{"reserved flag 0x20", withHeader(t, header(0x20, nil, "", "", -1), data), ErrHeader, false},
		{"reserved flag 0x40", withHeader(t, header(0x40, nil, "", "", -1), data), ErrHeader, false},
		{"reserved flag 0x80", withHeader(t, header(0x80, nil, "", "", -1), data), ErrHeader, false},
		{"empty input", nil, io.ErrUnexpectedEOF, true}, // compress/gzip: io.EOF
		{"magic only", []byte{0x1f, 0x8b}, io.ErrUnexpectedEOF, true},
		{"9 header bytes", header(0, nil, "", "", -1)[:9], io.ErrUnexpectedEOF, true},
		{"header only", header(0, nil, "", "", -1), io.ErrUnexpectedEOF, true},
		{"name unterminated", header(flagName, nil, "", "", -1)[:10], io.ErrUnexpectedEOF, true},
		{"extra cut", header(flagExtra, []byte("abcdef"), "", "", -1)[:14], io.ErrUnexpectedEOF, true},
		{"FHCRC cut", header(flagHdrCRC, nil, "", "", -1)[:11], io.ErrUnexpectedEOF, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, in := range []struct {
				name string
				wrap func(io.Reader) io.Reader
			}{{"whole", func(r io.Reader) io.Reader { return r }}, {"OneByteReader", iotest.OneByteReader}} {
				got, err := gunzipAll(in.wrap(bytes.NewReader(c.comp)))
				if c.err == nil {
					if err != nil || !bytes.Equal(got, data) {
						t.Fatalf("%s: %q, %v", in.name, got, err)
					}
				} else if !errors.Is(err, c.err) {
					t.Fatalf("%s: error %v, want %v", in.name, err, c.err)
				}
			}
			_, serr := stdAll(c.comp)
			if c.std && (serr == nil) != (c.err == nil) {
				t.Fatalf("compress/gzip disagrees: %v", serr)
			}
			if !c.std && (serr == nil) == (c.err == nil) {
				t.Fatalf("compress/gzip now agrees (%v): update the test", serr)
			}
		})
	}
}

// TestLongName checks a name longer than compress/gzip's 512-byte limit
// is read: RFC 1952 sets no limit.
func TestLongName(t *testing.T) {
	data := []byte("x")
	comp := withHeader(t, header(flagName|flagHdrCRC, nil, strings.Repeat("n", 5000), "", -1), data)
	got, err := gunzipAll(bytes.NewReader(comp))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("%q, %v", got, err)
	}
	if _, err := stdAll(comp); !errors.Is(err, gzip.ErrHeader) {
		t.Fatalf("compress/gzip: %v; the fuzz oracle's exception for long names is stale", err)
	}
	if _, long := headerQuirk(comp); !long {
		t.Fatal("headerQuirk misses the long name")
	}
	short := withHeader(t, header(flagExtra|flagName|flagComment, []byte("e"), strings.Repeat("n", 510), "c", -1), data)
	if _, long := headerQuirk(short); long {
		t.Fatal("headerQuirk takes a 510-byte name for long")
	}
	if _, err := stdAll(short); err != nil {
		t.Fatalf("compress/gzip rejects a 510-byte name: %v", err)
	}
}

// --- 4. multi-member ----------------------------------------------------------

func TestMultiMember(t *testing.T) {
	a, b, c := jsonLines(50<<10, 40), randomBytes(3000, 41), bytes.Repeat([]byte("z"), 70000)
	ga, gb, gc, g0 := stdGzip(t, a, 6), kGzip(t, b, 1), stdGzip(t, c, 0), stdGzip(t, nil, 6)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	cases := []struct {
		name string
		comp []byte
		want []byte
		err  error
	}{
		{"two", cat(ga, gb), cat(a, b), nil},
		{"three", cat(ga, gb, gc), cat(a, b, c), nil},
		{"empty first", cat(g0, ga), a, nil},
		{"empty middle", cat(ga, g0, gb), cat(a, b), nil},
		{"empty last", cat(ga, g0), a, nil},
		{"two empty", cat(g0, g0), nil, nil},
		{"trailing zero bytes", cat(ga, make([]byte, 20)), a, ErrHeader},
		{"trailing garbage", cat(ga, []byte("garbage after the member")), a, ErrHeader},
		{"trailing byte 0x1f", cat(ga, []byte{0x1f}), a, io.ErrUnexpectedEOF},
		{"trailing magic", cat(ga, []byte{0x1f, 0x8b}), a, io.ErrUnexpectedEOF},
		{"trailing header", cat(ga, gb[:10]), a, io.ErrUnexpectedEOF},
		{"second member cut", cat(ga, gb[:len(gb)-3]), nil, io.ErrUnexpectedEOF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := gunzipAll(bytes.NewReader(c.comp))
			if c.err == nil {
				if err != nil || !bytes.Equal(got, c.want) {
					t.Fatalf("%d bytes, %v", len(got), err)
				}
			} else {
				if !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
				if c.want != nil && !bytes.Equal(got, c.want) {
					t.Fatalf("output before the error: %d bytes, want the %d of the first member", len(got), len(c.want))
				}
			}
			sgot, serr := stdAll(c.comp)
			if (serr == nil) != (c.err == nil) || (serr == nil && !bytes.Equal(sgot, c.want)) {
				t.Fatalf("compress/gzip disagrees: %v", serr)
			}
		})
	}
}

// TestMemberBackReference checks a match may not reach into the previous
// member's output: each member is a deflate stream of its own.
func TestMemberBackReference(t *testing.T) {
	first := stdGzip(t, []byte("abcabcabc"), 6)
	var w bitWriter
	w.bits(0b011, 3) // final, fixed
	w.fixedSym(257)  // length 3
	w.fixedDist(2)   // distance 3
	w.fixedSym(256)
	second := gzipRaw(w.bytes(), []byte("abc"))
	comp := append(append([]byte{}, first...), second...)
	got, err := gunzipAll(bytes.NewReader(comp))
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("%q, %v; want a *CorruptError", got, err)
	}
	if ce.Offset < int64(len(first)) || ce.Offset > int64(len(comp)) {
		t.Errorf("offset %d is not in the second member [%d, %d]", ce.Offset, len(first), len(comp))
	}
	var fe flate.CorruptInputError
	if _, err := stdAll(comp); !errors.As(err, &fe) {
		t.Fatalf("compress/gzip: %v", err)
	}
	// A match that reaches back exactly to the member's first byte is
	// valid, after a member or not.
	var v bitWriter
	v.bits(0b011, 3)
	for _, c := range []byte("abc") {
		v.fixedSym(int(c))
	}
	v.fixedSym(257)
	v.fixedDist(2)
	v.fixedSym(256)
	valid := gzipRaw(v.bytes(), []byte("abcabc"))
	for _, prefix := range [][]byte{nil, first} {
		c := append(append([]byte{}, prefix...), valid...)
		want := "abcabc"
		if prefix != nil {
			want = "abcabcabc" + want
		}
		got, err := gunzipAll(bytes.NewReader(c))
		if err != nil || string(got) != want {
			t.Errorf("match to the member's start, after %d bytes: %q, %v", len(prefix), got, err)
		}
		if sgot, err := stdAll(c); err != nil || string(sgot) != want {
			t.Errorf("compress/gzip: %q, %v", sgot, err)
		}
	}
	// The same member alone is also corrupt, and after a stored member too.
	for _, prefix := range [][]byte{nil, stdGzip(t, []byte("abcabc"), 0)} {
		c := append(append([]byte{}, prefix...), second...)
		if _, err := gunzipAll(bytes.NewReader(c)); !errors.As(err, &ce) {
			t.Errorf("after %d bytes: %v", len(prefix), err)
		}
	}
}

// --- hand-made deflate ----------------------------------------------------------

// bitWriter writes a deflate stream: bits LSB-first, Huffman codes MSB-first.
type bitWriter struct {
	buf []byte
	acc uint64
	n   uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.n
	w.n += n
	for w.n >= 8 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

// code writes a Huffman codeword of n bits, most significant bit first.
func (w *bitWriter) code(cw uint16, n uint) {
	w.bits(uint64(bits.Reverse16(cw)>>(16-n)), n)
}

func (w *bitWriter) fixedSym(sym int) {
	switch {
	case sym < 144:
		w.code(uint16(0x30+sym), 8)
	case sym < 256:
		w.code(uint16(0x190+sym-144), 9)
	case sym < 280:
		w.code(uint16(sym-256), 7)
	default:
		w.code(uint16(0xc0+sym-280), 8)
	}
}

func (w *bitWriter) fixedDist(code int) { w.code(uint16(code), 5) }

// align pads to a byte boundary with zero bits.
func (w *bitWriter) align() {
	if w.n > 0 {
		w.bits(0, 8-w.n)
	}
}

func (w *bitWriter) bytes() []byte {
	w.align()
	return w.buf
}

// canonical is the canonical Huffman code of lens (RFC 1951 3.2.2).
func canonical(lens []uint8) []uint16 {
	var count [16]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	var next [16]int
	code := 0
	for l := 1; l < 16; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	codes := make([]uint16, len(lens))
	for i, l := range lens {
		if l > 0 {
			codes[i] = uint16(next[l])
			next[l]++
		}
	}
	return codes
}

// clTok is a code-length symbol with its extra bits.
type clTok struct {
	sym   int
	extra uint64
	n     uint
}

// dynamic writes a dynamic block's header: lit and dist are the code
// lengths (their counts give HLIT and HDIST), pre the code lengths' code
// lengths, toks the code-length symbols (nil: one per length, no repeats).
// It returns the codes for writing symbols.
func (w *bitWriter) dynamic(final bool, lit, dist []uint8, pre *[19]uint8, toks []clTok) (litCodes, distCodes []uint16) {
	if pre == nil {
		pre = &[19]uint8{}
		for i := range 16 {
			pre[i] = 4
		}
	}
	f := uint64(0)
	if final {
		f = 1
	}
	w.bits(f|2<<1, 3)
	w.bits(uint64(len(lit)-257), 5)
	w.bits(uint64(len(dist)-1), 5)
	w.bits(19-4, 4)
	for _, s := range codeOrder {
		w.bits(uint64(pre[s]), 3)
	}
	preCodes := canonical(pre[:])
	if toks == nil {
		for _, l := range append(append([]uint8{}, lit...), dist...) {
			toks = append(toks, clTok{sym: int(l)})
		}
	}
	for _, tk := range toks {
		w.code(preCodes[tk.sym], uint(pre[tk.sym]))
		w.bits(tk.extra, tk.n)
	}
	return canonical(lit), canonical(dist)
}

// lens is a code-length list of n entries, zero but for set.
func lens(n int, set map[int]uint8) []uint8 {
	l := make([]uint8, n)
	for s, v := range set {
		l[s] = v
	}
	return l
}

// gzipRaw wraps a raw deflate stream in a minimal header and a trailer for
// out.
func gzipRaw(raw, out []byte) []byte {
	b := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	b = append(b, raw...)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(out))
	return binary.LittleEndian.AppendUint32(b, uint32(len(out)))
}

// --- 6. deflate edge cases --------------------------------------------------------

func TestDeflateEdgeCases(t *testing.T) {
	type result int
	const (
		ok result = iota
		corrupt
	)
	cases := []struct {
		name string
		raw  func(w *bitWriter)
		want string // for ok
		res  result
	}{
		{"fixed block with matches", func(w *bitWriter) {
			w.bits(0b011, 3)
			for _, c := range []byte("hello ") {
				w.fixedSym(int(c))
			}
			w.fixedSym(265) // length 11, 1 extra bit: 12
			w.bits(1, 1)
			w.fixedDist(4) // distance 5, 1 extra bit: 6
			w.bits(1, 1)
			w.fixedSym(256)
		}, "hello hello hello ", ok},
		{"fixed block, distance 1 run of 258", func(w *bitWriter) {
			w.bits(0b011, 3)
			w.fixedSym('q')
			w.fixedSym(285)
			w.fixedDist(0)
			w.fixedSym(256)
		}, strings.Repeat("q", 259), ok},
		{"empty fixed block then stored", func(w *bitWriter) {
			w.bits(0b010, 3)
			w.fixedSym(256)
			w.bits(0b001, 3)
			w.align()
			w.bits(3, 16)
			w.bits(0xfffc, 16)
			w.bits('a'|'b'<<8|'c'<<16, 24)
		}, "abc", ok},
		{"stored empty final", func(w *bitWriter) {
			w.bits(1, 3)
			w.align()
			w.bits(0xffff0000, 32)
		}, "", ok},
		{"dynamic, one one-bit distance code", func(w *bitWriter) {
			lc, dc := w.dynamic(true, lens(257+1, map[int]uint8{'a': 1, 256: 2, 257: 2}), lens(1, map[int]uint8{0: 1}), nil, nil)
			w.code(lc['a'], 1)
			w.code(lc[257], 2)
			w.code(dc[0], 1)
			w.code(lc[257], 2)
			w.code(dc[0], 1)
			w.code(lc[256], 2)
		}, "aaaaaaa", ok},
		{"dynamic, empty distance code, literals only", func(w *bitWriter) {
			lc, _ := w.dynamic(true, lens(257, map[int]uint8{'a': 2, 'b': 2, 'c': 2, 256: 2}), lens(1, nil), nil, nil)
			for _, c := range "abcab" {
				w.code(lc[c], 2)
			}
			w.code(lc[256], 2)
		}, "abcab", ok},
		{"dynamic, one one-bit literal code, unused bit decoded", func(w *bitWriter) {
			// The literal code has one codeword, 256 as "0"; the
			// codeword "1" is missing.
			lc, _ := w.dynamic(true, lens(257, map[int]uint8{256: 1}), lens(1, nil), nil, nil)
			_ = lc
			w.bits(1, 1)
		}, "", corrupt},
		{"dynamic, length with empty distance code", func(w *bitWriter) {
			lc, _ := w.dynamic(true, lens(258, map[int]uint8{'a': 2, 256: 2, 257: 1}), lens(1, nil), nil, nil)
			w.code(lc['a'], 2)
			w.code(lc[257], 1)
			w.bits(0, 8)
		}, "", corrupt},
		{"dynamic, one-bit distance code, unused codeword", func(w *bitWriter) {
			lc, _ := w.dynamic(true, lens(258, map[int]uint8{'a': 1, 256: 2, 257: 2}), lens(1, map[int]uint8{0: 1}), nil, nil)
			w.code(lc['a'], 1)
			w.code(lc[257], 2)
			w.code(1, 1)
			w.code(lc[256], 2)
		}, "", corrupt},
		{"over-subscribed literal code", func(w *bitWriter) {
			w.dynamic(true, lens(257, map[int]uint8{'a': 1, 'b': 1, 256: 1}), lens(1, nil), nil, nil)
			w.bits(0, 16)
		}, "", corrupt},
		{"over-subscribed distance code", func(w *bitWriter) {
			w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 1}), lens(3, map[int]uint8{0: 1, 1: 1, 2: 1}), nil, nil)
			w.bits(0, 16)
		}, "", corrupt},
		{"incomplete literal code of two codewords", func(w *bitWriter) {
			lc, _ := w.dynamic(true, lens(257, map[int]uint8{'a': 2, 256: 2}), lens(1, nil), nil, nil)
			w.code(lc['a'], 2)
			w.code(lc[256], 2)
		}, "", corrupt},
		{"incomplete distance code of two codewords", func(w *bitWriter) {
			lc, _ := w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 1}), lens(2, map[int]uint8{0: 2, 1: 2}), nil, nil)
			w.code(lc['a'], 1)
			w.code(lc[256], 1)
		}, "", corrupt},
		{"over-subscribed code-length code", func(w *bitWriter) {
			pre := [19]uint8{}
			for i := range 17 {
				pre[i] = 4
			}
			w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 1}), lens(1, nil), &pre, []clTok{})
			w.bits(0, 32)
		}, "", corrupt},
		{"incomplete code-length code", func(w *bitWriter) {
			pre := [19]uint8{}
			for i := range 15 {
				pre[i] = 4
			}
			w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 1}), lens(1, nil), &pre, []clTok{})
			w.bits(0, 32)
		}, "", corrupt},
		{"fixed block, literal/length 286", func(w *bitWriter) {
			w.bits(0b011, 3)
			w.fixedSym('a')
			w.fixedSym(286)
			w.fixedDist(0)
			w.fixedSym(256)
		}, "", corrupt},
		{"fixed block, literal/length 287", func(w *bitWriter) {
			w.bits(0b011, 3)
			w.fixedSym('a')
			w.fixedSym(287)
			w.fixedDist(0)
			w.fixedSym(256)
		}, "", corrupt},
		{"fixed block, distance code 30", func(w *bitWriter) {
			w.bits(0b011, 3)
			w.fixedSym('a')
			w.fixedSym(257)
			w.fixedDist(30)
			w.fixedSym(256)
		}, "", corrupt},
		{"fixed block, distance code 31", func(w *bitWriter) {
			w.bits(0b011, 3)
			w.fixedSym('a')
			w.fixedSym(257)
			w.fixedDist(31)
			w.fixedSym(256)
		}, "", corrupt},
		{"stored block, NLEN not LEN's complement", func(w *bitWriter) {
			w.bits(1, 3)
			w.align()
			w.bits(3, 16)
			w.bits(0xfffd, 16)
			w.bits('a'|'b'<<8|'c'<<16, 24)
		}, "", corrupt},
		{"block type 3", func(w *bitWriter) {
			w.bits(0b111, 3)
			w.bits(0, 29)
		}, "", corrupt},
		{"block type 3 after a block", func(w *bitWriter) {
			w.bits(0b010, 3)
			w.fixedSym('a')
			w.fixedSym(256)
			w.bits(0b110, 3)
			w.bits(0, 29)
		}, "", corrupt},
		{"distance past the start of output", func(w *bitWriter) {
			w.bits(0b011, 3)
			w.fixedSym('a')
			w.fixedSym(257)
			w.fixedDist(1) // distance 2
			w.fixedSym(256)
		}, "", corrupt},
		{"distance at the start of output", func(w *bitWriter) {
			w.bits(0b011, 3)
			w.fixedSym(257)
			w.fixedDist(0)
			w.fixedSym(256)
		}, "", corrupt},
		{"repeat code 16 first", func(w *bitWriter) {
			pre := [19]uint8{}
			for i := range 15 {
				pre[i] = 4
			}
			pre[15], pre[16] = 5, 5
			w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 1}), lens(1, nil), &pre, []clTok{{16, 0, 2}})
			w.bits(0, 32)
		}, "", corrupt},
		{"repeat code 18 past HLIT+HDIST", func(w *bitWriter) {
			pre := [19]uint8{}
			for i := range 15 {
				pre[i] = 4
			}
			pre[15], pre[18] = 5, 5
			w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 1}), lens(1, nil), &pre, []clTok{{18, 127, 7}, {18, 127, 7}, {18, 127, 7}})
			w.bits(0, 32)
		}, "", corrupt},
		{"HLIT 287", func(w *bitWriter) {
			w.dynamic(true, lens(287, map[int]uint8{'a': 1, 256: 1}), lens(1, nil), nil, nil)
			w.bits(0, 8)
		}, "", corrupt},
		{"HLIT 288", func(w *bitWriter) {
			w.dynamic(true, lens(288, map[int]uint8{'a': 1, 256: 1}), lens(1, nil), nil, nil)
			w.bits(0, 8)
		}, "", corrupt},
		{"HDIST 31", func(w *bitWriter) {
			w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 1}), lens(31, nil), nil, nil)
			w.bits(0, 8)
		}, "", corrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var w bitWriter
			c.raw(&w)
			comp := gzipRaw(w.bytes(), []byte(c.want))
			got, err := gunzipAll(bytes.NewReader(comp))
			sgot, serr := stdAll(comp)
			switch c.res {
			case ok:
				if err != nil || string(got) != c.want {
					t.Fatalf("%q, %v; want %q", got, err, c.want)
				}
				if serr != nil || string(sgot) != c.want {
					t.Fatalf("compress/gzip: %q, %v", sgot, serr)
				}
			case corrupt:
				var ce *CorruptError
				if !errors.As(err, &ce) {
					t.Fatalf("%q, %v; want a *CorruptError", got, err)
				}
				if ce.Offset <= 10 || ce.Offset > int64(len(comp)) {
					t.Errorf("offset %d outside the deflate data", ce.Offset)
				}
				var fe flate.CorruptInputError
				if !errors.As(serr, &fe) {
					t.Fatalf("compress/gzip: %q, %v; want flate.CorruptInputError", sgot, serr)
				}
			}
		})
	}
}

// TestLongCodes decodes a dynamic block whose literal/length and distance
// codes have codewords of every length from 1 to 15 bits, so symbols are
// decoded through subtables of both tables.
func TestLongCodes(t *testing.T) {
	lit := make([]uint8, 258)
	for i := range 13 {
		lit['A'+i] = uint8(i + 1) // 1..13 bits
	}
	lit[257] = 14 // length 3
	lit['Z'], lit[256] = 15, 15
	dist := make([]uint8, 16)
	for i := range 14 {
		dist[i] = uint8(i + 1)
	}
	dist[14], dist[15] = 15, 15
	var w bitWriter
	lc, dc := w.dynamic(true, lit, dist, nil, nil)
	var want []byte
	rng := rand.New(rand.NewPCG(60, 0))
	for range 300 {
		c := 'A' + rng.IntN(13)
		if rng.IntN(10) == 0 {
			c = 'Z'
		}
		w.code(lc[c], uint(lit[c]))
		want = append(want, byte(c))
	}
	// Distance codes 0..15 with all-zero and all-one extra bits.
	dBase := []int{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193}
	dExtra := []uint{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}
	for code := range 16 {
		for _, ones := range []bool{false, true} {
			extra := uint64(0)
			if ones {
				extra = 1<<dExtra[code] - 1
			}
			w.code(lc[257], uint(lit[257]))
			w.code(dc[code], uint(dist[code]))
			w.bits(extra, dExtra[code])
			d := dBase[code] + int(extra)
			for range 3 {
				want = append(want, want[len(want)-d])
			}
		}
	}
	w.code(lc[256], uint(lit[256]))
	comp := gzipRaw(w.bytes(), want)
	got, err := gunzipAll(bytes.NewReader(comp))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, %v; first difference at %d", len(got), err, firstDiff(got, want))
	}
	if sgot, err := stdAll(comp); err != nil || !bytes.Equal(sgot, want) {
		t.Fatalf("compress/gzip: %v", err)
	}
}

// --- 5. truncation and corruption ------------------------------------------------

// truncCheck decodes comp[:cut] and fails unless it is an error other
// than io.EOF; with prefix, also unless the output before the error is a
// prefix of want.
func truncCheck(t *testing.T, comp, want []byte, cut int, prefix bool) {
	t.Helper()
	got, err := gunzipAll(bytes.NewReader(comp[:cut]))
	if err == nil {
		t.Fatalf("cut at %d of %d: no error, %d bytes of %d", cut, len(comp), len(got), len(want))
	}
	if err == io.EOF {
		t.Fatalf("cut at %d: io.EOF", cut)
	}
	if prefix && !bytes.HasPrefix(want, got) {
		t.Fatalf("cut at %d of %d: %d bytes before %v are not a prefix of the output (first difference at %d)", cut, len(comp), len(got), err, firstDiff(got, want))
	}
}

// TestTruncation cuts streams short: each cut must be an error, never the
// output with a nil error.
func TestTruncation(t *testing.T) { truncation(t, false) }

// TestTruncatedOutputIsPrefix holds a cut stream's output before the
// error to the bytes the whole stream has there, as compress/gzip does:
// bits past the end of input must not decode to output.
func TestTruncatedOutputIsPrefix(t *testing.T) {
	// A Huffman-only stream cut at byte 48: the zero bits fed past the
	// end decode as literals.
	small := jsonLines(1500, 50)
	comp := stdGzip(t, small, flate.HuffmanOnly)[:48]
	if _, err := stdAll(comp); err == nil {
		t.Fatal("compress/gzip decodes the cut stream")
	}
	got, err := gunzipAll(bytes.NewReader(comp))
	if err == nil || !bytes.HasPrefix(small, got) {
		t.Errorf("%q, %v; want a prefix of %q and an error", got, err, small[:len(got)])
	}
	// A dynamic block whose literal 'a' has the codeword 0, cut right
	// after the block's header: the input holds only the literals of the
	// last byte's padding bits, which compress/gzip gives.
	var w bitWriter
	w.dynamic(true, lens(257, map[int]uint8{'a': 1, 256: 1}), lens(1, nil), nil, nil)
	cut := append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, w.bytes()...)
	want, err := stdAll(cut)
	if err == nil || len(want) >= 8 {
		t.Fatalf("compress/gzip: %q, %v", want, err)
	}
	if got, err := gunzipAll(bytes.NewReader(cut)); err == nil || !bytes.Equal(got, want) {
		t.Errorf("input %x: %q, %v; want %q and an error", cut, got, err, want)
	}
	truncation(t, true)
}

func truncation(t *testing.T, prefix bool) {
	small := jsonLines(1500, 50)
	levels := []int{-2, 0, 1, 6, 9}
	if lighter() {
		levels = []int{-2, 0, 6}
	}
	for _, level := range levels {
		comp := stdGzip(t, small, level)
		for cut := range len(comp) {
			truncCheck(t, comp, small, cut, prefix)
		}
	}
	// Every cut of a multi-member stream, inside the second member too.
	multi := append(stdGzip(t, small[:700], 6), stdGzip(t, small[700:], 1)...)
	for cut := range len(multi) {
		if cut == len(multi)-len(stdGzip(t, small[700:], 1)) {
			continue // a whole first member is a valid stream
		}
		truncCheck(t, multi, small, cut, prefix)
	}

	large := mixed(300<<10, 51)
	step, tail := 997, 40
	if lighter() {
		step, tail = 9973, 12
	}
	for _, level := range []int{0, 6} {
		comp := stdGzip(t, large, level)
		for cut := 0; cut < len(comp); cut += step {
			truncCheck(t, comp, large, cut, prefix)
		}
		for cut := len(comp) - tail; cut < len(comp); cut++ {
			truncCheck(t, comp, large, cut, prefix)
		}
	}
}

func TestTrailer(t *testing.T) {
	data := jsonLines(10000, 52)
	comp := stdGzip(t, data, 6)
	n := len(comp)
	for _, c := range []struct {
		name string
		pos  int
	}{{"CRC byte 0", n - 8}, {"CRC byte 3", n - 5}, {"ISIZE byte 0", n - 4}, {"ISIZE byte 3", n - 1}} {
		bad := bytes.Clone(comp)
		bad[c.pos] ^= 0x01
		got, err := gunzipAll(bytes.NewReader(bad))
		if !errors.Is(err, ErrChecksum) {
			t.Errorf("%s: %v, want ErrChecksum", c.name, err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s: output before the error differs", c.name)
		}
		if _, err := stdAll(bad); !errors.Is(err, gzip.ErrChecksum) {
			t.Errorf("%s: compress/gzip: %v", c.name, err)
		}
	}
}

// TestBitFlips flips single bits all over streams: an error, or, when the
// flip lands where no decoder looks (MTIME, XFL, OS), the original output.
// The outcome is compared with compress/gzip's.
func TestBitFlips(t *testing.T) {
	data := mixed(12<<10, 53)
	positions := 150
	if lighter() {
		positions = 50
	}
	for _, level := range []int{-2, 0, 1, 6, 9} {
		comp := stdGzip(t, data, level)
		step := len(comp)/positions + 1
		for pos := 0; pos < len(comp); pos++ {
			// Every bit of the header and the trailer, and of every
			// step-th byte between.
			if pos >= 24 && pos < len(comp)-12 && pos%step != 0 {
				continue
			}
			for bit := range 8 {
				bad := bytes.Clone(comp)
				bad[pos] ^= 1 << bit
				got, err := gunzipAll(bytes.NewReader(bad))
				_, serr := stdAll(bad)
				reserved := pos == 3 && bit >= 5
				switch {
				case err == nil && !bytes.Equal(got, data):
					t.Fatalf("level %d, byte %d bit %d: no error, %d bytes that differ from the %d of the input", level, pos, bit, len(got), len(data))
				case err == nil && serr != nil:
					t.Fatalf("level %d, byte %d bit %d: no error, compress/gzip: %v", level, pos, bit, serr)
				case err != nil && serr == nil && !(reserved && errors.Is(err, ErrHeader)):
					t.Fatalf("level %d, byte %d bit %d: %v, compress/gzip decodes it", level, pos, bit, err)
				case err == io.EOF:
					t.Fatalf("level %d, byte %d bit %d: io.EOF", level, pos, bit)
				}
			}
		}
	}
}

// --- 8. benchmark -------------------------------------------------------------------

var benchData = sync.OnceValues(func() ([]byte, []byte) {
	raw := jsonLines(20<<20, 80)
	var b bytes.Buffer
	w, _ := kgzip.NewWriterLevel(&b, 6)
	w.Write(raw)
	w.Close()
	return raw, b.Bytes()
})

func BenchmarkReader(b *testing.B) {
	raw, comp := benchData()
	for _, c := range []struct {
		name string
		open func(io.Reader) (io.Reader, error)
	}{
		{"gunzip", func(r io.Reader) (io.Reader, error) { return NewReader(r) }},
		{"klauspost", func(r io.Reader) (io.Reader, error) { return kgzip.NewReader(r) }},
		{"stdlib", func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				z, err := c.open(bufio.NewReaderSize(bytes.NewReader(comp), 1<<16))
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, z)
				if err != nil || n != int64(len(raw)) {
					b.Fatal(n, err)
				}
			}
		})
	}
}
