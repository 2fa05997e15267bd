// Package linepool runs a line-oriented job over a stream: it cuts the
// stream into chunks of whole lines, hands them to a pool of workers, and
// passes the workers' results to a sink in input order.
//
// It knows nothing of JSON or classification. Memory stays flat whatever
// the stream's size: at most Config.InFlight chunks exist at once, each of
// about Config.ChunkSize bytes (a longer line gets a chunk of its own size).
// The first error, from any stage or from the context, cancels every stage;
// Run returns only after all its goroutines have stopped.
package linepool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/atlas-reproduce/atlas-reproduce/internal/freelist"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// Config sizes the linepool. Zero values take the defaults.
type Config struct {
	// Workers is the number of worker goroutines (default 1).
	Workers int
	// ChunkSize is the target size of a chunk in bytes (default 1 MiB).
	ChunkSize int
	// InFlight bounds the chunks read but not yet sunk (default
	// 2*Workers+2): it bounds memory and the reorder buffer.
	InFlight int
	// MaxLine is the longest line accepted, in bytes (default 1 GiB).
	MaxLine int
}

// DefaultChunkSize is the chunk size when Config.ChunkSize is zero.
const DefaultChunkSize = 1 << 20

// DefaultInFlight is Config.InFlight when it is zero: the chunks read but
// not yet sunk, for workers workers.
func DefaultInFlight(workers int) int { return 2*workers + 2 }

// DefaultMaxLine is the longest line accepted when Config.MaxLine is zero.
const DefaultMaxLine = census.DefaultMaxLine

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.ChunkSize <= 0 {
		c.ChunkSize = DefaultChunkSize
	}
	if c.InFlight <= 0 {
		c.InFlight = DefaultInFlight(c.Workers)
	}
	if c.MaxLine <= 0 {
		c.MaxLine = DefaultMaxLine
	}
	return c
}

// Chunk is a run of whole lines of the stream.
type Chunk struct {
	// Seq numbers the chunks from 0 in stream order.
	Seq int64
	// FirstLine is the 1-based number of the chunk's first line.
	FirstLine int64
	// Offset is the stream offset of the chunk's first byte.
	Offset int64
	// Data holds the lines, each ending in '\n' but perhaps the stream's
	// last. It is reused, or for a long line unmapped, once the worker
	// returns: results must not keep it or anything that aliases it.
	Data []byte

	buf *[]byte
	big bool // buf is a long line's own, freed on release
}

// Lines calls fn for each line of the chunk, without its '\n', with its
// 1-based line number; it stops at fn's first error.
func (c *Chunk) Lines(fn func(line int64, text []byte) error) error {
	data, n := c.Data, c.FirstLine
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var text []byte
		if i < 0 {
			text, data = data, nil
		} else {
			text, data = data[:i], data[i+1:]
		}
		if err := fn(n, text); err != nil {
			return err
		}
		n++
	}
	return nil
}

// ReadError is a failure of the stream itself, with how far it got.
type ReadError struct {
	// Offset is the number of stream bytes read before the failure.
	Offset int64
	// Line is the number of the line being read when it failed.
	Line int64
	Err  error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("%v (after %d bytes, at line %d)", e.Err, e.Offset, e.Line)
}

func (e *ReadError) Unwrap() error { return e.Err }

type result[R any] struct {
	seq int64
	val R
}

// Run streams r through work and sink. work runs on Config.Workers
// goroutines; its worker argument (0..Workers-1) lets it keep per-worker
// state without locks. sink runs on one goroutine and sees the results in
// chunk order, so output written there is the same for any worker count.
func Run[R any](ctx context.Context, r io.Reader, cfg Config,
	work func(ctx context.Context, worker int, c *Chunk) (R, error),
	sink func(R) error) error {
	cfg = cfg.withDefaults()
	g, ctx := errgroup.WithContext(ctx)
	chunks := make(chan *Chunk, cfg.Workers)
	results := make(chan result[R], cfg.Workers)
	// tokens bounds the chunks alive between the reader and the sink; the
	// reorder buffer can therefore never hold more than InFlight results.
	tokens := make(chan struct{}, cfg.InFlight)
	pool := newBufPool(cfg)

	g.Go(func() error {
		defer close(chunks)
		return Labelled(ctx, "split", func() error { return split(ctx, r, cfg, pool, tokens, chunks) })
	})

	var workers sync.WaitGroup
	for w := 0; w < cfg.Workers; w++ {
		workers.Add(1)
		g.Go(func() error {
			defer workers.Done()
			return Labelled(ctx, "work", func() error { return workLoop(ctx, w, chunks, results, pool, cfg, work) })
		})
	}
	go func() {
		workers.Wait()
		close(results)
	}()

	g.Go(func() error {
		return Labelled(ctx, "sink", func() error { return sinkLoop(ctx, results, sink, tokens) })
	})
	err := g.Wait()
	// The closer goroutine ends once the workers have: wait for it too, so
	// that Run leaves nothing running behind it.
	workers.Wait()
	// After a failure, chunks read but never worked on still hold buffers.
	for c := range chunks {
		release(pool, cfg, c)
	}
	return err
}

// Labelled runs fn with the goroutine labelled stage=name, so that a CPU
// profile of a run (go tool pprof -tagfocus stage=sink) splits the
// pipeline's one-goroutine stages from its parallel one. The stages of
// the run around the pipeline (its table writers) label themselves with
// it too.
func Labelled(ctx context.Context, name string, fn func() error) error {
	var err error
	pprof.Do(ctx, pprof.Labels("stage", name), func(context.Context) { err = fn() })
	return err
}

// workLoop is one worker: it works on chunks until they run out.
func workLoop[R any](ctx context.Context, w int, chunks <-chan *Chunk, results chan<- result[R], pool *bufPool, cfg Config,
	work func(ctx context.Context, worker int, c *Chunk) (R, error)) error {
	for c := range chunks {
		val, err := work(ctx, w, c)
		release(pool, cfg, c)
		if err != nil {
			return err
		}
		select {
		case results <- result[R]{c.Seq, val}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// sinkLoop hands the results to sink in chunk order, each chunk's token
// given back once it is sunk.
func sinkLoop[R any](ctx context.Context, results <-chan result[R], sink func(R) error, tokens <-chan struct{}) error {
	pending := map[int64]R{}
	var next int64
	for res := range results {
		pending[res.seq] = res.val
		for {
			v, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if err := sink(v); err != nil {
				return err
			}
			<-tokens
		}
	}
	if len(pending) != 0 && ctx.Err() == nil {
		return errors.New("pipeline: results lost out of order")
	}
	return nil
}

// bufPool holds the chunk buffers not in use, as many as can be in
// flight.
type bufPool = freelist.List[*[]byte]

func newBufPool(cfg Config) *bufPool {
	return freelist.New(cfg.InFlight, func() *[]byte { b := make([]byte, 0, cfg.ChunkSize); return &b })
}

// release returns a chunk's buffer to the pool, or frees it at once when a
// long line needed one of its own: keeping such buffers would let one long
// line raise the memory of the whole rest of the run.
func release(pool *bufPool, cfg Config, c *Chunk) {
	if c.big {
		freeBig(*c.buf)
	} else if c.buf != nil && cap(*c.buf) <= 2*cfg.ChunkSize {
		*c.buf = (*c.buf)[:0]
		pool.Put(c.buf)
	}
	c.buf, c.Data = nil, nil
}

// LineTooLongError is a line longer than Config.MaxLine. The pipeline reads
// on to the line's end without keeping it, so Size is the line's length. It
// is census's type, so that a caller checks one type whichever reader met
// the line.
type LineTooLongError = census.LineTooLongError

// bigInUse counts the bytes of long lines' own buffers not yet freed, so
// that tests can hold every path to freeing them; bigHigh is the largest
// single buffer ever made, so that tests can hold the limit on its growth.
var bigInUse, bigHigh atomic.Int64

func newBig(n int) ([]byte, error) {
	b, err := mapBig(n)
	if err == nil {
		bigInUse.Add(int64(cap(b)))
		noteBig(cap(b))
	}
	return b, err
}

func growBig(b []byte, n int) ([]byte, error) {
	old := cap(b)
	nb, err := remapBig(b, n)
	if err == nil {
		bigInUse.Add(int64(cap(nb) - old))
		noteBig(cap(nb))
	}
	return nb, err
}

func noteBig(n int) {
	for {
		high := bigHigh.Load()
		if int64(n) <= high || bigHigh.CompareAndSwap(high, int64(n)) {
			return
		}
	}
}

func freeBig(b []byte) {
	bigInUse.Add(-int64(cap(b)))
	unmapBig(b)
}

// splitter cuts the stream into chunks.
type splitter struct {
	r      io.Reader
	cfg    Config
	pool   *bufPool
	offset int64 // stream offset of the next chunk
	line   int64 // number of the next chunk's first line
	eof    bool
}

// split reads r into chunks that end at a newline, carrying the tail of each
// read into the next chunk.
func split(ctx context.Context, r io.Reader, cfg Config, pool *bufPool, tokens chan struct{}, out chan<- *Chunk) error {
	s := &splitter{r: r, cfg: cfg, pool: pool, line: 1}
	var (
		seq   int64
		carry []byte
	)
	for !s.eof {
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		bp, big := pool.Get(), false
		buf, err := s.fill(ctx, append((*bp)[:0], carry...), 0, false)
		if err != nil {
			return err
		}
		carry = nil
		if !s.eof && bytes.IndexByte(buf, '\n') < 0 {
			// One unfinished line fills the buffer: it gets a chunk of
			// its own size, and the pooled buffer goes back.
			long, err := s.long(ctx, buf)
			if err != nil {
				return err
			}
			*bp = buf[:0]
			pool.Put(bp)
			buf, bp, big = long, &long, true
		}
		data := buf
		if !s.eof {
			cut := bytes.LastIndexByte(buf, '\n') + 1
			data = buf[:cut]
			carry = append(carry, buf[cut:]...)
		}
		*bp = buf
		c := &Chunk{Seq: seq, FirstLine: s.line, Offset: s.offset, Data: data, buf: bp, big: big}
		if len(data) == 0 {
			release(pool, cfg, c)
			<-tokens
			continue
		}
		if cfg.MaxLine < cap(buf) {
			if err := s.checkLines(data); err != nil {
				release(pool, cfg, c)
				return err
			}
		}
		seq++
		s.offset += int64(len(data))
		s.line += int64(bytes.Count(data, []byte{'\n'}))
		select {
		case out <- c:
		case <-ctx.Done():
			release(pool, cfg, c)
			return ctx.Err()
		}
	}
	return nil
}

// fill reads into buf until it is full or the stream ends, or, with
// toNewline (buf then holds one unfinished line), until a read brings a
// newline. before is the number of bytes of the current line read into
// earlier buffers, for the position of a read error.
func (s *splitter) fill(ctx context.Context, buf []byte, before int, toNewline bool) ([]byte, error) {
	for len(buf) < cap(buf) {
		n, err := s.r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			s.eof = true
			return buf, nil
		}
		if err != nil {
			return buf, &ReadError{Offset: s.offset + int64(before+len(buf)), Line: s.line + int64(bytes.Count(buf, []byte{'\n'})), Err: err}
		}
		if ctx.Err() != nil {
			return buf, ctx.Err()
		}
		if toNewline && bytes.IndexByte(buf[len(buf)-n:], '\n') >= 0 {
			break
		}
	}
	return buf, nil
}

// long gathers a line longer than a chunk, whose start fills first, into a
// buffer of its own (see bigbuf_linux.go), grown in large steps until it
// holds the line's newline or the stream ends. first is left unchanged. The
// buffer never grows past MaxLine+1 bytes, the most a line of MaxLine bytes
// and its newline need: a longer line is refused when the buffer is full at
// that size, not after doubling past it.
func (s *splitter) long(ctx context.Context, first []byte) ([]byte, error) {
	if len(first) > s.cfg.MaxLine {
		return nil, s.tooLong(ctx, len(first), first)
	}
	limit := s.cfg.MaxLine + 1
	buf, err := newBig(min(4*cap(first), limit))
	if err != nil {
		return nil, s.bigErr(len(first), err)
	}
	buf = append(buf, first...)
	for !s.eof {
		if len(buf) == cap(buf) {
			if cap(buf) >= limit {
				size := len(buf)
				freeBig(buf)
				return nil, s.tooLong(ctx, size, first)
			}
			nb, err := growBig(buf, min(2*cap(buf), limit))
			if err != nil {
				freeBig(buf)
				return nil, s.bigErr(len(buf), err)
			}
			buf = nb
		}
		seen := len(buf)
		if buf, err = s.fill(ctx, buf, 0, true); err != nil {
			freeBig(buf)
			return nil, err
		}
		if i := bytes.IndexByte(buf[seen:], '\n'); i >= 0 {
			if seen+i > s.cfg.MaxLine {
				freeBig(buf)
				return nil, s.tooLongErr(int64(seen + i))
			}
			return buf, nil
		}
	}
	if len(buf) > s.cfg.MaxLine {
		freeBig(buf)
		return nil, s.tooLongErr(int64(len(buf)))
	}
	return buf, nil
}

// bigErr reports a failure to get memory for a long line.
func (s *splitter) bigErr(size int, err error) error {
	return &ReadError{Offset: s.offset + int64(size), Line: s.line,
		Err: fmt.Errorf("no memory for line %d, longer than %d bytes: %w", s.line, size, err)}
}

// tooLong reads on to the end of a line known to exceed the limit, through
// the spare buffer scratch, to report its length.
func (s *splitter) tooLong(ctx context.Context, size int, scratch []byte) error {
	for !s.eof {
		b, err := s.fill(ctx, scratch[:0], size, false)
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return s.tooLongErr(int64(size + i))
		}
		size += len(b)
	}
	return s.tooLongErr(int64(size))
}

func (s *splitter) tooLongErr(size int64) error {
	return &ReadError{Offset: s.offset + size, Line: s.line,
		Err: &LineTooLongError{Line: s.line, Size: size, Max: s.cfg.MaxLine}}
}

// checkLines enforces a limit smaller than a chunk on the lines of data,
// the chunk about to start at s.offset and s.line.
func (s *splitter) checkLines(data []byte) error {
	line, off := s.line, s.offset
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n')
		next := n + 1
		if n < 0 {
			n, next = len(data), len(data)
		}
		if n > s.cfg.MaxLine {
			return &ReadError{Offset: off + int64(n), Line: line,
				Err: &LineTooLongError{Line: line, Size: int64(n), Max: s.cfg.MaxLine}}
		}
		data = data[next:]
		line++
		off += int64(next)
	}
	return nil
}
