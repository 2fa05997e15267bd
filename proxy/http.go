package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/internal/httpserve"
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
	sess *session      // the relay
	done chan struct{} // closed when the relay has ended

	active atomic.Int32 // requests being served
	// listening counts the client's standalone streams (GET) open: with
	// an event store the transport takes a message for that stream even
	// when none is, and the client would see it only on a resumption it
	// has no reason to make, so such messages wait in the outbox.
	listening atomic.Int32
	last      atomic.Int64 // unix nanoseconds of the last request's end

	// wmu serializes the writes of what is not an answer (notifications
	// and the server's requests, which go to the standalone stream), so
	// that they reach the client in order, queued or not. It is taken
	// before mu, never after.
	wmu sync.Mutex
	// mu guards outbox, outboxBytes and sending, and is never held while
	// the connection is written to: a slow client must not stall the
	// timer that withdraws a request from the outbox.
	mu sync.Mutex
	// outbox holds messages the client's standalone event stream could not
	// take yet: a server's notification or request may come before the
	// client opened that stream. They go out, in order, when it opens.
	outbox      []jsonrpc.Message
	outboxBytes int64
	// sending is the outbox's first message while flush writes it: it
	// can no longer be withdrawn.
	sending jsonrpc.Message
}

// maxOutbox and maxOutboxBytes bound the messages held for a client that
// has not opened its standalone stream; beyond them they are dropped (and
// logged).
const (
	maxOutbox      = 256
	maxOutboxBytes = 16 << 20
)

type sessionTable struct {
	p *Proxy
	// ctx is the sessions' relays' context, the table's own: closeAll
	// cancels it once every session it found has ended.
	ctx    context.Context
	cancel context.CancelFunc
	// mu guards m, closed and opening. Rules: once closed is set, no
	// session is reserved or enters m; wg.Add happens only under mu with
	// closed false, so that closeAll's wg.Wait, after it set closed,
	// waits for every reservation (an upstream being connected, a command
	// being started) and every relay there will ever be.
	mu     sync.Mutex
	m      map[string]*httpSession
	closed bool
	// opening counts the sessions reserved but not yet in m.
	opening int
	// wg counts the reservations not yet given back and the relays
	// running.
	wg sync.WaitGroup
}

func newSessionTable(p *Proxy) *sessionTable {
	ctx, cancel := context.WithCancel(context.Background())
	return &sessionTable{p: p, ctx: ctx, cancel: cancel, m: map[string]*httpSession{}}
}

// errTooManySessions refuses a session beyond MaxSessions.
var errTooManySessions = errors.New("too many sessions; retry later")

// reserve counts a session about to open against MaxSessions; the function
// it returns gives the place back when the session does not open.
func (t *sessionTable) reserve() (func(), error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errShuttingDown
	}
	if len(t.m)+t.opening >= t.p.cfg.MaxSessions {
		return nil, errTooManySessions
	}
	t.opening++
	t.wg.Add(1)
	return func() {
		t.mu.Lock()
		t.opening--
		t.mu.Unlock()
		t.wg.Done()
	}, nil
}

// errShuttingDown refuses a session once the proxy is shutting down.
var errShuttingDown = errors.New("the proxy is shutting down")

func (t *sessionTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

func (t *sessionTable) get(id string) *httpSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id]
}

// open starts a session relaying to up, and its relay; once the table is
// closed it refuses (the caller closes up).
func (t *sessionTable) open(up mcp.Connection) (*httpSession, error) {
	s := &httpSession{id: rand.Text(), done: make(chan struct{})}
	s.t = &mcp.StreamableServerTransport{SessionID: s.id, EventStore: t.p.events}
	conn, err := s.t.Connect(t.ctx)
	if err != nil {
		return nil, err
	}
	s.conn = conn
	s.last.Store(time.Now().UnixNano())
	s.sess = t.p.newSession(conn, up, s.write, s.withdraw)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		conn.Close()
		return nil, errShuttingDown
	}
	t.m[s.id] = s
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		defer close(s.done)
		s.sess.run(t.ctx)
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

// closeAll refuses new sessions, ends every session, and waits for every
// relay and every session being opened (their upstreams closed, their
// commands exited) before it returns.
func (t *sessionTable) closeAll() {
	t.mu.Lock()
	t.closed = true
	all := slices.Collect(maps.Values(t.m))
	t.mu.Unlock()
	for _, s := range all {
		t.close(s)
	}
	// What is still opening (an upstream being connected) ends with the
	// table's context; open refuses it, and the opener closes its upstream.
	t.cancel()
	t.wg.Wait()
	if t.p.link != nil {
		t.p.link.close()
	}
	t.p.streams.close()
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
	// A message of a call in flight (its progress, a request the server
	// makes for it) goes on that call's own stream, as the transport
	// specification has it; once the call is answered, the standalone
	// stream takes it.
	if id, ok := relatedCall(ctx); ok {
		if err := s.conn.Write(sdkRelated(ctx, id), msg); err == nil {
			return nil
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	queued := len(s.outbox) > 0
	s.mu.Unlock()
	if !queued && s.listening.Load() > 0 {
		if err := s.conn.Write(ctx, msg); err == nil {
			return nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	size := messageSize(msg)
	if len(s.outbox) >= maxOutbox || s.outboxBytes+size > maxOutboxBytes {
		return errors.New("the client's standalone stream is not open and the outbox is full")
	}
	s.outbox = append(s.outbox, msg)
	s.outboxBytes += size
	return errQueued
}

// errQueued says a message waits in the outbox for the standalone stream.
var errQueued = errors.New("queued until the client opens its standalone stream")

// withdraw takes msg out of the outbox, reporting whether it was there.
func (s *httpSession) withdraw(msg jsonrpc.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.outbox {
		if m == msg && m != s.sending {
			s.outbox = append(s.outbox[:i], s.outbox[i+1:]...)
			s.outboxBytes -= messageSize(m)
			return true
		}
	}
	return false
}

// flush sends what the outbox holds, in order, once the standalone stream
// is open.
func (s *httpSession) flush() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for {
		s.mu.Lock()
		if len(s.outbox) == 0 {
			s.mu.Unlock()
			return
		}
		m := s.outbox[0]
		s.sending = m
		s.mu.Unlock()
		err := s.conn.Write(context.Background(), m)
		s.mu.Lock()
		s.sending = nil
		if err == nil {
			s.outbox[0] = nil
			s.outbox = s.outbox[1:]
			s.outboxBytes -= messageSize(m)
		}
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// messageSize is what a message holds, about: its params or result.
func messageSize(m jsonrpc.Message) int64 {
	switch m := m.(type) {
	case *jsonrpc.Request:
		return int64(len(m.Params)) + 64
	case *jsonrpc.Response:
		return int64(len(m.Result)) + 64
	}
	return 64
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
		if r.Header.Get(sessionHeader) == "" && len(r.Header.Values("Last-Event-ID")) > 0 {
			p.streams.resume(w, r) // a call without a session (2026-07-28)
			return
		}
		s := p.session(w, r)
		if s == nil {
			return
		}
		defer s.touch()()
		if !standaloneGET(r) {
			s.t.ServeHTTP(w, r) // a call's stream, resumed
			return
		}
		// opened runs in a goroutine of its own (see openedWriter): it
		// may come after the stream has ended, and then counts nothing.
		var mu sync.Mutex
		counted, ended := false, false
		opened := func() {
			mu.Lock()
			if ended {
				mu.Unlock()
				return
			}
			counted = true
			s.listening.Add(1)
			mu.Unlock()
			s.flush()
		}
		s.t.ServeHTTP(&openedWriter{ResponseWriter: w, opened: opened}, r)
		mu.Lock()
		ended = true
		if counted {
			s.listening.Add(-1)
		}
		mu.Unlock()
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

// standaloneGET reports whether a GET opens (or resumes) the standalone
// stream rather than resuming a call's: the transport numbers the
// standalone stream's events "_N".
func standaloneGET(r *http.Request) bool {
	if len(r.Header.Values("Last-Event-ID")) == 0 {
		return true
	}
	return strings.HasPrefix(r.Header.Get("Last-Event-ID"), "_")
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
	body, release, ok := p.readBody(w, r)
	if !ok {
		return
	}
	defer release()
	var s *httpSession
	fresh := false
	if r.Header.Get(sessionHeader) == "" {
		init, isInit := initializeRequest(body)
		if !isInit {
			if v, ok := statelessRequest(r, body); ok {
				p.serveStateless(w, r, body, v)
				return
			}
			http.Error(w, "missing "+sessionHeader+" header: a session starts with initialize", http.StatusBadRequest)
			return
		}
		// What the transport would refuse is refused here, before an
		// upstream session or process exists for it.
		if !acceptsStreamable(r) {
			http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
			return
		}
		if len(r.Header.Values("Last-Event-ID")) > 0 {
			http.Error(w, "can't send Last-Event-ID for POST request", http.StatusBadRequest)
			return
		}
		var err error
		if s, err = p.openSession(); err != nil {
			p.refuseInitialize(w, init, err)
			return
		}
		fresh = true
		// The upstream answers the initialize before the transport sees
		// it: an upstream that fails at once (a command that exits)
		// is an HTTP error with the JSON-RPC error for the client's id,
		// and no session is left behind.
		ans, err := s.sess.call(r.Context(), init)
		if err != nil {
			p.sessions.close(s)
			p.refuseInitialize(w, init, &httpError{statusUpstream, err})
			return
		}
		s.sess.mu.Lock()
		s.sess.initAnswer = ans
		s.sess.mu.Unlock()
	} else if s = p.session(w, r); s == nil {
		return
	} else if err := s.sess.failed(); err != nil {
		// The upstream is gone: every call of the POST is answered with
		// that, under an HTTP error status.
		p.refuseCalls(w, body, err)
		return
	}
	defer s.touch()()
	if !fresh {
		if msgs, direct := transportRefuses(body); direct {
			p.serveDirect(w, r, s, msgs)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if !fresh {
		s.t.ServeHTTP(w, r)
		return
	}
	// A session whose initialize the transport refuses is ended at once:
	// the client was never told its id and could not end it.
	sw := &httpserve.StatusWriter{ResponseWriter: w}
	s.t.ServeHTTP(sw, r)
	if sw.Code >= 400 {
		p.sessions.close(s)
	}
}

// openSession connects an upstream session and opens a downstream one
// relaying to it, within MaxSessions.
// The upstream's connection outlives the request (an SSE upstream's stream
// is held by the context it was opened with): it takes the table's.
func (p *Proxy) openSession() (*httpSession, error) {
	unreserve, err := p.sessions.reserve()
	if err != nil {
		return nil, &httpError{http.StatusServiceUnavailable, err}
	}
	defer unreserve()
	up, err := p.connectUpstream(p.sessions.ctx)
	if err != nil {
		return nil, &httpError{statusUpstream, err}
	}
	s, err := p.sessions.open(up)
	if err != nil {
		up.Close()
		code := http.StatusInternalServerError
		if errors.Is(err, errShuttingDown) {
			code = http.StatusServiceUnavailable
		}
		return nil, &httpError{code, err}
	}
	return s, nil
}

// sdkMethods are the methods the SDK's server transport lets through, and
// whether each is a notification, and may come without params (the SDK's
// serverMethodInfos, v1.8.0). A message it would refuse (an unknown method
// such as tasks/get, or a known one of another shape) is relayed by the
// proxy itself: a relay passes what it does not understand.
var sdkMethods = map[string]struct{ notification, noParamsOK bool }{
	"completion/complete": {}, "server/discover": {false, true}, "initialize": {},
	"ping": {false, true}, "prompts/list": {false, true}, "prompts/get": {},
	"tools/list": {false, true}, "tools/call": {}, "resources/list": {false, true},
	"resources/templates/list": {false, true}, "resources/read": {}, "logging/setLevel": {},
	"resources/subscribe": {}, "subscriptions/listen": {}, "resources/unsubscribe": {},
	"notifications/cancelled": {true, true}, "notifications/initialized": {true, true},
	"notifications/roots/list_changed": {true, true}, "notifications/progress": {true, false},
}

// transportRefuses decodes a POST's messages and reports whether the SDK's
// transport would refuse one of them.
func transportRefuses(body []byte) ([]jsonrpc.Message, bool) {
	msgs, err := decodeLine(body)
	if err != nil {
		return nil, false // the transport answers it
	}
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		info, known := sdkMethods[req.Method]
		if !known || info.notification == req.IsCall() || (!info.noParamsOK && len(req.Params) == 0) {
			return msgs, true
		}
	}
	return nil, false
}

// serveDirect relays a POST's messages upstream without the SDK's
// transport, and answers with the answers to its calls as JSON (202 when
// it held none). What the server sends meanwhile that is not an answer
// goes to the standalone stream.
func (p *Proxy) serveDirect(w http.ResponseWriter, r *http.Request, s *httpSession, msgs []jsonrpc.Message) {
	var answers []json.RawMessage
	for _, m := range msgs {
		if resp := s.sess.forward(r.Context(), m); resp != nil {
			data, err := jsonrpc.EncodeMessage(resp)
			if err == nil {
				answers = append(answers, data)
			}
		}
	}
	if len(answers) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	out := answers[0]
	if len(msgs) > 1 {
		out, _ = json.Marshal(answers)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// refuseCalls answers every call in body with err, under statusUpstream.
func (p *Proxy) refuseCalls(w http.ResponseWriter, body []byte, err error) {
	msgs, derr := decodeLine(body)
	var out []byte
	if derr == nil {
		var answers []json.RawMessage
		for _, m := range msgs {
			if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
				data, _ := jsonrpc.EncodeMessage(errorResponse(req.ID, CodeUpstream, err.Error(), nil))
				answers = append(answers, data)
			}
		}
		switch {
		case len(answers) == 1 && len(msgs) == 1:
			out = answers[0]
		case len(answers) > 0:
			out, _ = json.Marshal(answers)
		}
	}
	if out == nil {
		http.Error(w, err.Error(), statusUpstream)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(statusUpstream)
	w.Write(out)
}

// statusUpstream is the HTTP status of an answer that carries the
// upstream's failure as a JSON-RPC error: 424 Failed Dependency (the
// request failed because the upstream did). Not 500 or 502: clients treat
// 500, 502, 503, 504 and 429 as transient, retry and drop the body (the Go
// SDK does), and the client must read the error for its request id.
const statusUpstream = http.StatusFailedDependency

// httpError is a failure answered with its HTTP status.
type httpError struct {
	code int
	err  error
}

func (e *httpError) Error() string { return e.err.Error() }

// refuseInitialize answers an initialize no session could be opened for:
// the HTTP status says what failed, and the body is a JSON-RPC error for
// the request's id, so that the client's call gets its answer.
func (p *Proxy) refuseInitialize(w http.ResponseWriter, init *jsonrpc.Request, err error) {
	code := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		code = he.code
	}
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	data, _ := jsonrpc.EncodeMessage(errorResponse(init.ID, CodeUpstream, err.Error(), nil))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(data)
}

// acceptsStreamable reports whether the client accepts both answers of
// the Streamable HTTP transport.
func acceptsStreamable(r *http.Request) bool {
	var js, sse bool
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
			js = js || mt == "application/json" || mt == "application/*" || mt == "*/*"
			sse = sse || mt == "text/event-stream" || mt == "text/*" || mt == "*/*"
		}
	}
	return js && sse
}

// readBody reads a POST's body within MaxBody, after taking its room among
// the bytes in flight (MaxInFlight): many clients each sending a large
// body wait for room, and are told to come back (503) when none comes
// within ReadTimeout, rather than together holding more than the budget.
// release gives the room back once the request is done with the body.
func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), ok bool) {
	limit := p.cfg.MaxBody
	if r.ContentLength > limit {
		http.Error(w, fmt.Sprintf("request body of %d bytes exceeds %d bytes", r.ContentLength, limit), http.StatusRequestEntityTooLarge)
		return nil, nil, false
	}
	room := limit + 1
	if r.ContentLength >= 0 {
		room = r.ContentLength + 1
	}
	room = min(room, p.cfg.MaxInFlight)
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.ReadTimeout)
	err := p.inFlight.Acquire(ctx, room)
	cancel()
	if err != nil {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "no room for the request body among the bytes in flight; retry later", http.StatusServiceUnavailable)
		return nil, nil, false
	}
	release = func() { p.inFlight.Release(room) }
	buf := bytes.NewBuffer(make([]byte, 0, min(room, 64<<10)))
	_, err = buf.ReadFrom(io.LimitReader(http.MaxBytesReader(w, r.Body, limit), room))
	if err != nil {
		release()
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, nil, false
		}
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return nil, nil, false
	}
	if int64(buf.Len()) >= room && room <= limit {
		release()
		http.Error(w, "request body longer than announced, or than the room in flight", http.StatusRequestEntityTooLarge)
		return nil, nil, false
	}
	return buf.Bytes(), release, true
}

// initializeRequest returns the body's initialize request, if it is one.
func initializeRequest(body []byte) (*jsonrpc.Request, bool) {
	m, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, false
	}
	req, ok := m.(*jsonrpc.Request)
	return req, ok && req.Method == "initialize" && req.IsCall()
}
