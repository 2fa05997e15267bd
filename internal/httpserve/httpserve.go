// Package httpserve holds what the serve and proxy commands share as HTTP
// servers: the limits a slow or stalled client meets, and the way a server
// listens, serves and drains when its context is cancelled.
package httpserve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Default limits. ReadHeaderTimeout and ReadTimeout close a connection
// that drips its request, IdleTimeout a kept-alive connection that sends
// nothing more; ShutdownTimeout bounds the drain once the context is
// cancelled.
const (
	DefaultMaxBody           = 8 << 20
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultShutdownTimeout   = 10 * time.Second
	// MaxHeaderBytes bounds a request's header block.
	MaxHeaderBytes = 64 << 10
)

// Run listens on addr, reports the bound address to ready when not nil
// (":0" picks a free port), and hands the listener to serve.
func Run(ctx context.Context, addr string, ready func(net.Addr), serve func(context.Context, net.Listener) error) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return serve(ctx, ln)
}

// Serve serves hs on ln until ctx is cancelled, then stops accepting and
// lets requests in flight finish for up to shutdownTimeout; requests still
// running after that are cut off and Serve says so. stop, when not nil,
// runs before the drain, and when hs stops serving on its own: it ends what
// would hold Shutdown open (long-lived streams).
func Serve(ctx context.Context, hs *http.Server, ln net.Listener, shutdownTimeout time.Duration, stop func()) error {
	if stop == nil {
		stop = func() {}
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		stop()
		return err
	case <-ctx.Done():
	}
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-served // http.ErrServerClosed, once Shutdown has closed the listener
	if err != nil {
		hs.Close()
		return fmt.Errorf("shutdown: requests still running after %v were cut off: %w", shutdownTimeout, err)
	}
	return nil
}
