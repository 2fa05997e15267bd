package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The HTTP downstream keeps its own table of sessions around the SDK's
// StreamableServerTransport: the SDK's StreamableHTTPHandler connects
// each transport to an SDK Server, which would answer the client itself;
// a proxy needs the transport's raw connection instead.

// httpSession is one downstream Streamable HTTP session.
type httpSession struct {
	id   string
	t    *mcp.StreamableServerTransport
	conn mcp.Connection
	done chan struct{} // closed when the relay has ended

	active atomic.Int32 // requests being served
	last   atomic.Int64 // unix nanoseconds of the last request's end

	// outbox holds messages the client's standalone event stream could not
	// take yet: a server's notification or request may come before the
	// client opened that stream. They go out, in order, when it opens.
	mu     sync.Mutex
	outbox []jsonrpc.Message
}

// maxOutbox bounds the messages held for a client that has not opened its
// standalone stream; beyond it they are dropped (and logged).
const maxOutbox = 256

type sessionTable struct {
	p  *Proxy
	mu sync.Mutex
	m  map[string]*httpSession
}

func newSessionTable(p *Proxy) *sessionTable {
	return &sessionTable{p: p, m: map[string]*httpSession{}}
}

func (t *sessionTable) get(id string) *httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id]
}

// open starts a session and its relay.
func (t *sessionTable) open() (*httpSession, error) {
	s := &httpSession{id: rand.Text(), done: make(chan struct{})}
	s.t = &mcp.StreamableServerTransport{SessionID: s.id}
	conn, err := s.t.Connect(context.Background())
	if err != nil {
		return nil, err
	}
	s.conn = conn
	s.last.Store(time.Now().UnixNano())
	t.mu.Lock()
	t.m[s.id] = s
	t.mu.Unlock()
	go func() {
		defer close(s.done)
		t.p.relay(context.Background(), conn, s.write, s.withdraw)
		t.mu.Lock()
		delete(t.m, s.id)
		t.mu.Unlock()
	}()
	return s, nil
}

// close ends a session: the relay closes its upstream and returns.
func (t *sessionTable) close(s *httpSession) {
	s.conn.Close()
	<-s.done
}

func (t *sessionTable) closeAll() {
	t.mu.Lock()
	all := make([]*httpSession, 0, len(t.m))
	for _, s := range t.m {
		all = append(all, s)
	}
	t.mu.Unlock()
	for _, s := range all {
		t.close(s)
	}
}

// janitor ends sessions idle for longer than SessionIdle.
func (t *sessionTable) janitor(ctx context.Context) {
	idle := t.p.cfg.SessionIdle
	tick := time.NewTicker(max(idle/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cutoff := time.Now().Add(-idle).UnixNano()
		t.mu.Lock()
		var stale []*httpSession
		for _, s := range t.m {
			if s.active.Load() == 0 && s.last.Load() < cutoff {
				stale = append(stale, s)
			}
		}
		t.mu.Unlock()
		for _, s := range stale {
			t.p.log.Info("idle session ended", "session", s.id)
			t.close(s)
		}
	}
}

// write delivers a message to the client. Answers go to the request's own
// stream; anything else goes to the standalone stream, or waits in the
// outbox until the client opens it.
func (s *httpSession) write(ctx context.Context, msg jsonrpc.Message) error {
	if _, ok := msg.(*jsonrpc.Response); ok {
		return s.conn.Write(ctx, msg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.outbox) == 0 {
		if err := s.conn.Write(ctx, msg); err == nil {
			return nil
		}
	}
	if len(s.outbox) >= maxOutbox {
		return errors.New("the client's standalone stream is not open and the outbox is full")
	}
	s.outbox = append(s.outbox, msg)
	return errQueued
}

// errQueued says a message waits in the outbox for the standalone stream.
var errQueued = errors.New("queued until the client opens its standalone stream")

// withdraw takes msg out of the outbox, reporting whether it was there.
func (s *httpSession) withdraw(msg jsonrpc.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.outbox {
		if m == msg {
			s.outbox = append(s.outbox[:i], s.outbox[i+1:]...)
			return true
		}
	}
	return false
}

// flush sends what the outbox holds, in order, once the standalone stream
// is open.
func (s *httpSession) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.outbox {
		if s.conn.Write(context.Background(), m) != nil {
			break
		}
		n++
	}
	s.outbox = append(s.outbox[:0], s.outbox[n:]...)
}

// openedWriter tells, through opened, when the SDK first flushes the
// standalone stream's headers: the stream can take messages from then on.
type openedWriter struct {
	http.ResponseWriter
	once   sync.Once
	opened func()
}

func (w *openedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	w.once.Do(func() { go w.opened() }) // the SDK holds the stream's lock here
}

func (w *openedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

const sessionHeader = "Mcp-Session-Id"

// serveMCP is the Streamable HTTP endpoint.
func (p *Proxy) serveMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		p.servePOST(w, r)
	case http.MethodGet:
		s := p.session(w, r)
		if s == nil {
			return
		}
		defer s.touch()()
		s.t.ServeHTTP(&openedWriter{ResponseWriter: w, opened: s.flush}, r)
	case http.MethodDelete:
		s := p.session(w, r)
		if s == nil {
			return
		}
		p.sessions.close(s)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// touch marks a request in flight on the session; the function it returns
// marks its end.
func (s *httpSession) touch() func() {
	s.active.Add(1)
	return func() {
		s.last.Store(time.Now().UnixNano())
		s.active.Add(-1)
	}
}

// session finds the request's session, or answers 400 (no id) or 404 (an
// unknown or ended one, which tells the client to start again).
func (p *Proxy) session(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(sessionHeader)
	if id == "" {
		http.Error(w, "missing "+sessionHeader+" header", http.StatusBadRequest)
		return nil
	}
	s := p.sessions.get(id)
	if s == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return nil
	}
	return s
}

func (p *Proxy) servePOST(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.cfg.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return
	}
	var s *httpSession
	if r.Header.Get(sessionHeader) == "" {
		if !isInitialize(body) {
			http.Error(w, "missing "+sessionHeader+" header: a session starts with initialize", http.StatusBadRequest)
			return
		}
		if s, err = p.sessions.open(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	} else if s = p.session(w, r); s == nil {
		return
	}
	defer s.touch()()
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	s.t.ServeHTTP(w, r)
}

func isInitialize(body []byte) bool {
	m, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return false
	}
	req, ok := m.(*jsonrpc.Request)
	return ok && req.Method == "initialize"
}
