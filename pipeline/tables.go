package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/atlas-reproduce/atlas-reproduce/pipeline/linepool"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
)

// tableQueue is how many chunks each table writer may lag behind the sink.
const tableQueue = 2

// tablesStage writes tools.parquet and properties.parquet, each on a
// goroutine of its own, from the chunks the sink hands over in order: the
// encoding runs beside the pipeline instead of on its critical path, and
// the two files beside each other.
type tablesStage struct {
	ctx          context.Context
	g            *errgroup.Group
	tools, props chan *chunkRows
	closed       bool
	err          error
}

func startTables(ctx context.Context, toolsF, propsF io.Writer, pool *rowsPool, meta ...tables.KV) (*tablesStage, error) {
	toolsBuf, propsBuf := bufio.NewWriterSize(toolsF, 1<<20), bufio.NewWriterSize(propsF, 1<<20)
	tw, err := tables.NewToolsWriter(toolsBuf, meta...)
	if err != nil {
		return nil, err
	}
	pw, err := tables.NewPropertiesWriter(propsBuf, meta...)
	if err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	s := &tablesStage{ctx: gctx, g: g, tools: make(chan *chunkRows, tableQueue), props: make(chan *chunkRows, tableQueue)}
	g.Go(func() error {
		return linepool.Labelled(gctx, "tools-table", func() error {
			return drain(s.tools, pool, func(r *chunkRows) error { return tw.Append(&r.tools) }, tw.Close, toolsBuf)
		})
	})
	g.Go(func() error {
		return linepool.Labelled(gctx, "props-table", func() error {
			return drain(s.props, pool, func(r *chunkRows) error { return pw.Append(&r.props, &r.tools, r.firstOrdinal) }, pw.Close, propsBuf)
		})
	})
	return s, nil
}

// drain writes every chunk of ch, then finishes the file. It stops at the
// first error, which cancels the stage's context and so fails send.
func drain(ch <-chan *chunkRows, pool *rowsPool, write func(*chunkRows) error, finish func() error, buf *bufio.Writer) error {
	for r := range ch {
		err := write(r)
		pool.done(r)
		if err != nil {
			return err
		}
	}
	if err := finish(); err != nil {
		return err
	}
	if err := buf.Flush(); err != nil {
		return fmt.Errorf("writing Parquet: %w", err)
	}
	return nil
}

// send hands r to both writers; it fails once either has failed.
func (s *tablesStage) send(r *chunkRows) error {
	r.pending.Store(2)
	for _, ch := range [...]chan *chunkRows{s.tools, s.props} {
		select {
		case ch <- r:
		case <-s.ctx.Done():
			return context.Cause(s.ctx)
		}
	}
	return nil
}

// close ends the writers and waits for them: after the last send it
// finishes both files; after a failure it only stops the goroutines. It may
// be called more than once.
func (s *tablesStage) close() error {
	if !s.closed {
		s.closed = true
		close(s.tools)
		close(s.props)
		s.err = s.g.Wait()
	}
	return s.err
}
