package sha256x8

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
)

// kernel is one way Sum can hash a batch.
type kernel struct {
	name   string
	force  bool // forceMulti: take the eight-lane path
	avx512 bool // useAVX512: with block8AVX512 rather than block8
}

// kernels are all of Sum's paths: crypto/sha256 per message, and the eight
// lanes with each compression function.
var kernels = []kernel{
	{"std", false, false},
	{"avx2", true, false},
	{"avx512", true, true},
}

// set selects k for the duration of the test, or skips the test when the
// processor cannot run k.
func (k kernel) set(t testing.TB) {
	t.Helper()
	if k.force && !canMulti {
		t.Skip("this processor lacks AVX2: the eight-lane code cannot run here")
	}
	if k.avx512 && !canAVX512 {
		t.Skip("this processor lacks AVX-512VL: block8AVX512 cannot run here")
	}
	oldForce, oldAVX512 := forceMulti, useAVX512
	forceMulti, useAVX512 = k.force, k.avx512
	t.Cleanup(func() { forceMulti, useAVX512 = oldForce, oldAVX512 })
}

// eachKernel runs f as one subtest per kernel.
func eachKernel(t *testing.T, f func(t *testing.T)) {
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			k.set(t)
			f(t)
		})
	}
}

// randMsgs returns messages of the given lengths filled from rng.
func randMsgs(rng *rand.Rand, lens []int) [][]byte {
	msgs := make([][]byte, len(lens))
	for i, n := range lens {
		m := make([]byte, n)
		for j := range m {
			m[j] = byte(rng.Uint32())
		}
		msgs[i] = m
	}
	return msgs
}

// check hashes msgs with Sum and compares every digest with crypto/sha256.
func check(t testing.TB, msgs [][]byte) {
	t.Helper()
	out := make([][32]byte, len(msgs)+1) // one spare: Sum must not write past len(msgs)
	sentinel := [32]byte{0: 0xa5, 31: 0x5a}
	out[len(msgs)] = sentinel
	Sum(msgs, out)
	for i, m := range msgs {
		if want := sha256.Sum256(m); out[i] != want {
			t.Fatalf("message %d of %d (%d bytes): got %x, want %x", i, len(msgs), len(m), out[i], want)
		}
	}
	if out[len(msgs)] != sentinel {
		t.Fatalf("Sum wrote past len(msgs)")
	}
}

// edges are the lengths where padding changes shape: empty, one byte,
// the largest with a one-block tail (55), the smallest needing two (56),
// block boundaries and their neighbours, and longer messages.
var edges = []int{0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096 + 7}

func TestSum(t *testing.T) {
	rep := func(n, count int) []int {
		s := make([]int, count)
		for i := range s {
			s[i] = n
		}
		return s
	}
	cases := []struct {
		name string
		lens []int
	}{
		{"none", nil},
		{"one empty", []int{0}},
		{"one long", []int{4096 + 7}},
		{"two", []int{55, 56}},
		{"edges", edges},
		{"edges reversed", func() []int {
			s := make([]int, len(edges))
			for i, n := range edges {
				s[len(edges)-1-i] = n
			}
			return s
		}()},
		{"edges twice", append(append([]int{}, edges...), edges...)},
		{"exactly eight", []int{0, 64, 1, 128, 55, 56, 63, 65}},
		{"nine", rep(300, 9)},
		{"long first among short", append([]int{4096 + 7}, rep(10, 40)...)},
		{"long last among short", append(rep(200, 40), 4096+7)},
		{"long in the middle", append(append(rep(120, 20), 1000, 4096+7), rep(56, 20)...)},
		{"many short", rep(0, 100)},
		{"census-like", func() []int {
			rng := rand.New(rand.NewPCG(1, 2))
			s := make([]int, 500)
			for i := range s {
				s[i] = 150 + rng.IntN(400)
			}
			return s
		}()},
	}
	for _, k := range kernels {
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				k.set(t)
				rng := rand.New(rand.NewPCG(uint64(len(c.lens)), 7))
				check(t, randMsgs(rng, c.lens))
			})
		}
	}
}

// TestSumRandomBatches mixes random lengths from 0 to 300 bytes in batches
// of random size, so lanes finish in every possible order.
func TestSumRandomBatches(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for range 200 {
			lens := make([]int, rng.IntN(30))
			for i := range lens {
				lens[i] = rng.IntN(300)
			}
			check(t, randMsgs(rng, lens))
		}
	})
}

// TestSumAliasedMessages passes the same backing array several times and
// sub-slices of one buffer: Sum must only read the messages.
func TestSumAliasedMessages(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		buf := randMsgs(rng, []int{5000})[0]
		before := string(buf)
		var msgs [][]byte
		for i := range 20 {
			msgs = append(msgs, buf[i*37:i*37+i*100], buf, buf[:0])
		}
		check(t, msgs)
		if string(buf) != before {
			t.Fatal("Sum modified a message")
		}
	})
}

// compression is one of the assembly compression functions and whether
// this processor can run it.
type compression struct {
	name  string
	can   bool
	block func(*[8][8]uint32, *[8]*byte)
}

func compressions() []compression {
	return []compression{{"avx2", canMulti, block8}, {"avx512", canAVX512, block8AVX512}}
}

// TestBlock8 compares the compression functions with the portable one for
// random chaining values and blocks, lane by lane.
func TestBlock8(t *testing.T) {
	funcs := compressions()
	for _, f := range funcs {
		t.Run(f.name, func(t *testing.T) {
			if !f.can {
				t.Skipf("this processor cannot run the %s code", f.name)
			}
			rng := rand.New(rand.NewPCG(8, 9))
			for range 1000 {
				var st [8][8]uint32
				for w := range st {
					for l := range st[w] {
						st[w][l] = rng.Uint32()
					}
				}
				data := randMsgs(rng, []int{8 * 64})[0]
				var blocks [8]*byte
				for l := range blocks {
					// Lanes read blocks in a shuffled order so a mix-up of lanes shows.
					blocks[l] = &data[((l*3)%8)*64]
				}
				want := st
				block8Generic(&want, &blocks)
				f.block(&st, &blocks)
				if st != want {
					t.Fatalf("%s = %x\nwant %x", f.name, st, want)
				}
			}
		})
	}
}

// TestSumAllocs checks that a call allocates nothing: the lanes' state and
// tail buffers live on the stack.
func TestSumAllocs(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(10, 11))
		msgs := randMsgs(rng, append(edges, edges...))
		out := make([][32]byte, len(msgs))
		if n := testing.AllocsPerRun(20, func() { Sum(msgs, out) }); n != 0 {
			t.Fatalf("Sum allocates %v times per call, want 0", n)
		}
	})
}

func TestSumShortOut(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Sum with len(out) < len(msgs) did not panic")
		}
	}()
	Sum(make([][]byte, 4), make([][32]byte, 3))
}

// FuzzSum splits its input at fuzz-chosen points into messages and checks
// every digest.
func FuzzSum(f *testing.F) {
	f.Add([]byte("abc"), uint64(0))
	f.Add(make([]byte, 1000), uint64(0x0123456789abcdef))
	f.Add(make([]byte, 4103), uint64(1)<<63|55)
	f.Fuzz(func(t *testing.T, data []byte, cuts uint64) {
		for _, k := range kernels {
			if k.force && !canMulti || k.avx512 && !canAVX512 {
				continue
			}
			forceMulti, useAVX512 = k.force, k.avx512
			// Each byte of cuts is the length of the next message (the
			// last message takes the rest); zero lengths make empty
			// messages, and the split repeats so long inputs give many.
			var msgs [][]byte
			rest := data
			for i := 0; len(rest) > 0 || i < 2; i++ {
				n := int(cuts >> (8 * (i % 8)) & 0xff)
				if i%8 == 7 {
					n *= 17 // an occasional long one
				}
				n = min(n, len(rest))
				msgs = append(msgs, rest[:n])
				rest = rest[n:]
				if i > 1000 {
					msgs = append(msgs, rest)
					break
				}
			}
			check(t, msgs)
		}
		forceMulti, useAVX512 = false, canAVX512
	})
}

// BenchmarkSum compares the eight-lane code with block8 (multi) and with
// block8AVX512 (multi-avx512) against crypto/sha256's Sum256 per message
// (std), for 4096 messages per operation.
func BenchmarkSum(b *testing.B) {
	for _, size := range []int{300, 1200} {
		rng := rand.New(rand.NewPCG(12, uint64(size)))
		lens := make([]int, 4096)
		for i := range lens {
			lens[i] = size
		}
		msgs := randMsgs(rng, lens)
		out := make([][32]byte, len(msgs))
		for _, k := range []kernel{{"multi", true, false}, {"multi-avx512", true, true}} {
			b.Run(fmt.Sprintf("size=%d/%s", size, k.name), func(b *testing.B) {
				k.set(b)
				b.SetBytes(int64(size * len(msgs)))
				for b.Loop() {
					Sum(msgs, out)
				}
			})
		}
		b.Run(fmt.Sprintf("size=%d/std", size), func(b *testing.B) {
			b.SetBytes(int64(size * len(msgs)))
			for b.Loop() {
				for i, m := range msgs {
					out[i] = sha256.Sum256(m)
				}
			}
		})
	}
}

// BenchmarkBlock8 measures the compression functions alone: eight 64-byte
// blocks per call, without the scheduler around them.
func BenchmarkBlock8(b *testing.B) {
	data := randMsgs(rand.New(rand.NewPCG(13, 14)), []int{8 * 64})[0]
	var blocks [8]*byte
	for l := range blocks {
		blocks[l] = &data[l*64]
	}
	funcs := compressions()
	for _, f := range funcs {
		b.Run(f.name, func(b *testing.B) {
			if !f.can {
				b.Skipf("this processor cannot run the %s code", f.name)
			}
			var st [8][8]uint32
			b.SetBytes(8 * 64)
			for b.Loop() {
				f.block(&st, &blocks)
			}
		})
	}
}
