package linepool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"go.uber.org/goleak"
)

// lineRecord is what the test workers return per chunk: every line with its
// number, so the sink can check order, numbering and completeness.
type lineRecord struct {
	n    int64
	text string
}

func collect(t *testing.T, r io.Reader, cfg Config) ([]lineRecord, error) {
	t.Helper()
	var got []lineRecord
	err := Run(context.Background(), r, cfg,
		func(_ context.Context, w int, c *Chunk) ([]lineRecord, error) {
			if w < 0 || w >= max(cfg.Workers, 1) {
				return nil, fmt.Errorf("worker index %d out of range", w)
			}
			var out []lineRecord
			err := c.Lines(func(n int64, text []byte) error {
				out = append(out, lineRecord{n, string(text)})
				return nil
			})
			return out, err
		},
		func(recs []lineRecord) error { got = append(got, recs...); return nil })
	if n := bigInUse.Load(); n != 0 {
		t.Errorf("%d bytes of long-line buffers not freed after Run", n)
	}
	return got, err
}

func makeInput(lines int, long map[int]int) (string, []string) {
	var b strings.Builder
	var want []string
	for i := 1; i <= lines; i++ {
		s := fmt.Sprintf("line %d", i)
		if n, ok := long[i]; ok {
			s += strings.Repeat("x", n)
		}
		want = append(want, s)
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.String(), want
}

func TestOrderAndNumbering(t *testing.T) {
	defer goleak.VerifyNone(t)
	input, want := makeInput(20000, map[int]int{7: 5000, 19999: 70000})
	for _, workers := range []int{1, 2, 8} {
		for _, chunk := range []int{64, 4096, 1 << 20} {
			// OneByteReader and DataErrReader vary how reads split lines.
			for name, r := range map[string]io.Reader{
				"plain":   strings.NewReader(input),
				"onebyte": iotest.HalfReader(strings.NewReader(input)),
				"dataerr": iotest.DataErrReader(strings.NewReader(input)),
			} {
				got, err := collect(t, r, Config{Workers: workers, ChunkSize: chunk})
				if err != nil {
					t.Fatalf("workers=%d chunk=%d %s: %v", workers, chunk, name, err)
				}
				if len(got) != len(want) {
					t.Fatalf("workers=%d chunk=%d %s: %d lines, want %d", workers, chunk, name, len(got), len(want))
				}
				for i, rec := range got {
					if rec.n != int64(i+1) || rec.text != want[i] {
						t.Fatalf("workers=%d chunk=%d %s: line %d = (%d, %.20q), want (%d, %.20q)", workers, chunk, name, i, rec.n, rec.text, i+1, want[i])
					}
				}
			}
		}
	}
}

func TestNoTrailingNewlineAndEmpty(t *testing.T) {
	got, err := collect(t, strings.NewReader("a\n\nb"), Config{Workers: 2, ChunkSize: 1})
	if err != nil || len(got) != 3 || got[2].text != "b" || got[1].text != "" || got[2].n != 3 {
		t.Fatalf("got %v, %v", got, err)
	}
	got, err = collect(t, strings.NewReader(""), Config{})
	if err != nil || len(got) != 0 {
		t.Fatalf("empty input: %v, %v", got, err)
	}
}

func TestMaxLine(t *testing.T) {
	input := "short\n" + strings.Repeat("y", 5000) + "\nafter\n"
	_, err := collect(t, strings.NewReader(input), Config{ChunkSize: 64, MaxLine: 1000})
	var re *ReadError
	if !errors.As(err, &re) || re.Line != 2 || !strings.Contains(err.Error(), "longer than 1000") {
		t.Fatalf("err = %v, want a ReadError at line 2", err)
	}
}

func TestReadErrorCarriesPosition(t *testing.T) {
	defer goleak.VerifyNone(t)
	boom := errors.New("gzip: invalid checksum")
	r := io.MultiReader(strings.NewReader("a\nb\nc"), iotest.ErrReader(boom))
	_, err := collect(t, r, Config{Workers: 2, ChunkSize: 2})
	var re *ReadError
	if !errors.Is(err, boom) || !errors.As(err, &re) || re.Line != 3 {
		t.Fatalf("err = %v, want the reader's error at line 3", err)
	}
}

// TestErrorsCancelEverything checks that a worker's error or a cancelled
// context stops every stage and leaks no goroutine, even with the stream
// far from consumed.
func TestErrorsCancelEverything(t *testing.T) {
	defer goleak.VerifyNone(t)
	input, _ := makeInput(200000, nil)
	boom := errors.New("bad record")
	err := Run(context.Background(), strings.NewReader(input), Config{Workers: 4, ChunkSize: 256},
		func(_ context.Context, _ int, c *Chunk) (int, error) {
			if c.Seq == 3 {
				return 0, boom
			}
			return len(c.Data), nil
		},
		func(int) error { return nil })
	if !errors.Is(err, boom) {
		t.Fatalf("worker error: got %v", err)
	}

	sinkErr := errors.New("disk full")
	err = Run(context.Background(), strings.NewReader(input), Config{Workers: 4, ChunkSize: 256},
		func(_ context.Context, _ int, c *Chunk) (int, error) { return 0, nil },
		func(int) error { return sinkErr })
	if !errors.Is(err, sinkErr) {
		t.Fatalf("sink error: got %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	err = Run(ctx, strings.NewReader(input), Config{Workers: 4, ChunkSize: 256},
		func(_ context.Context, _ int, c *Chunk) (int, error) {
			if c.Seq == 10 {
				cancel()
			}
			return 0, nil
		},
		func(int) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: got %v", err)
	}
}

// TestBoundedInFlight checks that a slow first chunk cannot make the reader
// run ahead: no more than InFlight chunks are ever alive at once.
func TestBoundedInFlight(t *testing.T) {
	defer goleak.VerifyNone(t)
	input, _ := makeInput(50000, nil)
	release := make(chan struct{})
	var alive, peak int64
	var mu chanMutex = make(chan struct{}, 1)
	cfg := Config{Workers: 3, ChunkSize: 128, InFlight: 5}
	done := make(chan error)
	go func() {
		done <- Run(context.Background(), strings.NewReader(input), cfg,
			func(_ context.Context, _ int, c *Chunk) (int64, error) {
				mu.lock()
				alive++
				peak = max(peak, alive)
				mu.unlock()
				if c.Seq == 0 {
					<-release
				}
				return c.Seq, nil
			},
			func(int64) error { mu.lock(); alive--; mu.unlock(); return nil })
	}()
	// Let the other workers run into the bound, then free the first chunk.
	for i := 0; i < 1000; i++ {
		mu.lock()
		a := alive
		mu.unlock()
		if a >= int64(cfg.InFlight) {
			break
		}
		yieldBriefly()
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if peak > int64(cfg.InFlight) {
		t.Fatalf("%d chunks alive at once, bound %d", peak, cfg.InFlight)
	}
	if peak < 2 {
		t.Fatalf("peak %d: workers never overlapped, the test proves nothing", peak)
	}
}

type chanMutex chan struct{}

func (m chanMutex) lock()   { m <- struct{}{} }
func (m chanMutex) unlock() { <-m }

func yieldBriefly() { runtime.Gosched() }

// TestLongLines: lines around and far beyond the chunk size, last or not,
// with and without a final newline, arrive whole whatever the reads.
func TestLongLines(t *testing.T) {
	defer goleak.VerifyNone(t)
	const chunk = 64
	for _, n := range []int{chunk - 1, chunk, chunk + 1, 2*chunk - 1, 2 * chunk, 2*chunk + 1, 1000, 5000} {
		for _, final := range []bool{false, true} {
			long := strings.Repeat("z", n)
			want := []string{"a", long, "b", long + long, "c"}
			if final {
				want = []string{"a", long + "z"}
			}
			input := strings.Join(want, "\n")
			if !final {
				input += "\n"
			}
			for name, r := range map[string]io.Reader{
				"plain": strings.NewReader(input),
				"half":  iotest.HalfReader(strings.NewReader(input)),
				"byte":  iotest.OneByteReader(strings.NewReader(input)),
			} {
				got, err := collect(t, r, Config{Workers: 2, ChunkSize: chunk})
				if err != nil {
					t.Fatalf("n=%d final=%v %s: %v", n, final, name, err)
				}
				if len(got) != len(want) {
					t.Fatalf("n=%d final=%v %s: %d lines, want %d", n, final, name, len(got), len(want))
				}
				for i := range want {
					if got[i].n != int64(i+1) || got[i].text != want[i] {
						t.Fatalf("n=%d final=%v %s: line %d = (%d, %d bytes), want (%d, %d bytes)", n, final, name, i, got[i].n, len(got[i].text), i+1, len(want[i]))
					}
				}
			}
		}
	}
}

// TestLineTooLong: a line over the limit is refused with its number and its
// whole length, whether the limit is above or below the chunk size; a line
// of exactly the limit passes.
func TestLineTooLong(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name       string
		input      string
		chunk, max int
		line, size int64 // 0: no error
	}{
		{"over, chunk below", "a\n" + strings.Repeat("x", 5000) + "\nb\n", 64, 1000, 2, 5000},
		{"over, chunk above", "a\nb\n" + strings.Repeat("x", 1001) + "\n", 4096, 1000, 3, 1001},
		{"over, last line without newline", "a\n" + strings.Repeat("x", 3000), 64, 1000, 2, 3000},
		{"over, chunk above, no newline", "a\n" + strings.Repeat("x", 3000), 4096, 1000, 2, 3000},
		{"over by one in the block with the newline", "a\n" + strings.Repeat("x", 1001) + "\nb", 512, 1000, 2, 1001},
		{"exactly the limit", "a\n" + strings.Repeat("x", 1000) + "\nb\n", 64, 1000, 0, 0},
		{"exactly the limit, chunk above", strings.Repeat("x", 1000) + "\n" + strings.Repeat("y", 1000), 4096, 1000, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, r := range map[string]io.Reader{
				"plain": strings.NewReader(tt.input),
				"half":  iotest.HalfReader(strings.NewReader(tt.input)),
			} {
				_, err := collect(t, r, Config{Workers: 2, ChunkSize: tt.chunk, MaxLine: tt.max})
				if tt.line == 0 {
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					continue
				}
				var tl *LineTooLongError
				var re *ReadError
				if !errors.As(err, &tl) || !errors.As(err, &re) || tl.Line != tt.line || tl.Size != tt.size || tl.Max != tt.max || re.Line != tt.line {
					t.Fatalf("%s: err = %v, want line %d of %d bytes", name, err, tt.line, tt.size)
				}
			}
		})
	}
}

// TestLongLineBuffersFreed: whichever stage fails, and whatever was in
// flight then, every long line's own buffer is freed by the time Run
// returns.
func TestLongLineBuffersFreed(t *testing.T) {
	defer goleak.VerifyNone(t)
	long := map[int]int{}
	for i := 1; i <= 400; i += 2 {
		long[i] = 3000
	}
	input, _ := makeInput(400, long)
	boom := errors.New("boom")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tests := []struct {
		name string
		ctx  context.Context
		work func(c *Chunk) error
		sink func() error
		want error
	}{
		{"worker error", context.Background(), func(c *Chunk) error {
			if c.Seq == 5 {
				return boom
			}
			return nil
		}, func() error { return nil }, boom},
		{"sink error", context.Background(), func(*Chunk) error { return nil }, func() error { return boom }, boom},
		{"cancelled", ctx, func(c *Chunk) error {
			if c.Seq == 7 {
				cancel()
			}
			return nil
		}, func() error { return nil }, context.Canceled},
		{"line too long", context.Background(), func(*Chunk) error { return nil }, func() error { return nil }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Workers: 3, ChunkSize: 256}
			if tt.want == nil {
				cfg.MaxLine = 2000
			}
			err := Run(tt.ctx, strings.NewReader(input), cfg,
				func(_ context.Context, _ int, c *Chunk) (int, error) { return 0, tt.work(c) },
				func(int) error { return tt.sink() })
			var tl *LineTooLongError
			if (tt.want != nil && !errors.Is(err, tt.want)) || (tt.want == nil && !errors.As(err, &tl)) {
				t.Fatalf("err = %v", err)
			}
			if n := bigInUse.Load(); n != 0 {
				t.Errorf("%d bytes of long-line buffers not freed", n)
			}
		})
	}
}
