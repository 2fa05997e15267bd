// Package ctxio makes long reads stop when their context is cancelled.
package ctxio

import (
	"context"
	"io"
)

// Reader returns a reader that fails with the context's error once ctx is
// cancelled, so that a loop reading a large file or a pipe stops at its next
// read instead of running to the end.
func Reader(ctx context.Context, r io.Reader) io.Reader { return reader{ctx, r} }

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
