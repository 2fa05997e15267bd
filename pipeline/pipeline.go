// Package pipeline runs a line-oriented job over a stream: it cuts the
// stream into chunks of whole lines, hands them to a pool of workers, and
// passes the workers' results to a sink in input order.
//
// It knows nothing of JSON or classification. Memory stays flat whatever
// the stream's size: at most Config.InFlight chunks exist at once, each of
// about Config.ChunkSize bytes (a longer line gets a chunk of its own size).
// The first error, from any stage or from the context, cancels every stage;
// Run returns only after all its goroutines have stopped.
package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Config sizes the pipeline. Zero values take the defaults.
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

// DefaultMaxLine is the longest line accepted when Config.MaxLine is zero.
const DefaultMaxLine = 1 << 30

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.ChunkSize <= 0 {
		c.ChunkSize = DefaultChunkSize
	}
	if c.InFlight <= 0 {
		c.InFlight = 2*c.Workers + 2
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
	// last. It is reused once the worker returns: results must not keep it.
	Data []byte

	buf *[]byte
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
	pool := &sync.Pool{New: func() any { b := make([]byte, 0, cfg.ChunkSize); return &b }}

	g.Go(func() error {
		defer close(chunks)
		return split(ctx, r, cfg, pool, tokens, chunks)
	})

	var workers sync.WaitGroup
	for w := 0; w < cfg.Workers; w++ {
		workers.Add(1)
		g.Go(func() error {
			defer workers.Done()
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
		})
	}
	go func() {
		workers.Wait()
		close(results)
	}()

	g.Go(func() error {
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
	})
	err := g.Wait()
	// The closer goroutine ends once the workers have: wait for it too, so
	// that Run leaves nothing running behind it.
	workers.Wait()
	return err
}

// release returns a chunk's buffer to the pool unless a long line grew it:
// keeping such buffers would let one long line raise the memory of the whole
// rest of the run.
func release(pool *sync.Pool, cfg Config, c *Chunk) {
	if c.buf != nil && cap(*c.buf) <= 2*cfg.ChunkSize {
		*c.buf = (*c.buf)[:0]
		pool.Put(c.buf)
	}
	c.buf, c.Data = nil, nil
}

// split reads r into chunks that end at a newline, carrying the tail of each
// read into the next chunk.
func split(ctx context.Context, r io.Reader, cfg Config, pool *sync.Pool, tokens chan struct{}, out chan<- *Chunk) error {
	var (
		seq, offset int64
		line        int64 = 1
		carry       []byte
		eof         bool
	)
	for !eof {
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		bp := pool.Get().(*[]byte)
		buf := append((*bp)[:0], carry...)
		carry = nil
		// Fill the buffer; once full, cut it at its last newline. Only a
		// buffer that is one unfinished line grows.
		for {
			if len(buf) == cap(buf) {
				if bytes.LastIndexByte(buf, '\n') >= 0 {
					break
				}
				if len(buf) > cfg.MaxLine {
					return &ReadError{Offset: offset + int64(len(buf)), Line: line,
						Err: fmt.Errorf("line %d is longer than %d bytes", line, cfg.MaxLine)}
				}
				grown := make([]byte, len(buf), 2*cap(buf))
				copy(grown, buf)
				buf = grown
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return &ReadError{Offset: offset + int64(len(buf)), Line: line + int64(bytes.Count(buf, []byte{'\n'})), Err: err}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		data := buf
		if !eof {
			cut := bytes.LastIndexByte(buf, '\n') + 1
			data = buf[:cut]
			carry = append(carry, buf[cut:]...)
		}
		if len(data) == 0 {
			*bp = buf[:0]
			pool.Put(bp)
			<-tokens
			continue
		}
		if cap(buf) != cap(*bp) {
			// The buffer grew for a long line; it is not pooled afterwards.
			nb := buf
			bp = &nb
		}
		*bp = buf
		c := &Chunk{Seq: seq, FirstLine: line, Offset: offset, Data: data, buf: bp}
		seq++
		offset += int64(len(data))
		line += int64(bytes.Count(data, []byte{'\n'}))
		select {
		case out <- c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
