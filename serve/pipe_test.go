package serve

import (
	"net"
	"sync"
)

// pipeListener is a listener of in-memory connections (net.Pipe): a
// server on it inside a testing/synctest bubble waits on the bubble's
// clock, not on the machine's.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// dial returns the client end of a new connection to the listener.
func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	select {
	case l.conns <- s:
	case <-l.done:
		s.Close()
	}
	return c
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
