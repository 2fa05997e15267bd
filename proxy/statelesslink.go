package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request of revision 2026-07-28 needs no session, so one connection
// to an upstream reached through a connection (a command's stdio, a
// legacy SSE server, an embedded transport) carries every client's: the
// link. Each request is sent with an id (and progress token) of the
// link's own, so that two clients' ids cannot meet, and answered with
// the client's. The link asks the upstream's server/discover first: an
// upstream that does not name the stateless revision is not sent any
// (the client is told the revisions the proxy's sessions speak, and falls
// back to initialize, as before). A link whose connection fails is
// connected again by the next request.
type statelessLink struct {
	p *Proxy
	// dial serializes connecting and the discover that follows.
	dial sync.Mutex
	// readers counts the connections' readers, for close.
	readers sync.WaitGroup

	mu      sync.Mutex
	conn    mcp.Connection
	closed  bool
	speaks  bool // the upstream's discover named the stateless revision
	probed  bool
	seq     int64
	waiters map[string]*linkCall
}

// linkCall is a request in flight on the link.
type linkCall struct {
	id    jsonrpc.ID // the client's
	token json.RawMessage
	// out takes the call's progress notifications and, last, its answer;
	// it is closed when the connection ends first.
	out chan jsonrpc.Message
}

func newStatelessLink(p *Proxy) *statelessLink {
	return &statelessLink{p: p, waiters: map[string]*linkCall{}}
}

// errNoStateless says the upstream does not speak the stateless revision.
var errNoStateless = errors.New("the upstream does not speak " + statelessVersion)

// get returns the link's connection, connecting (and asking the
// upstream's discover, with the _meta of the client's request) when there
// is none.
func (l *statelessLink) get(ctx context.Context, meta json.RawMessage) (mcp.Connection, error) {
	l.dial.Lock()
	defer l.dial.Unlock()
	l.mu.Lock()
	conn, probed, speaks, closed := l.conn, l.probed, l.speaks, l.closed
	l.mu.Unlock()
	switch {
	case closed:
		return nil, errShuttingDown
	case probed && !speaks:
		return nil, errNoStateless
	case conn != nil:
		return conn, nil
	}
	conn, err := l.p.cfg.Upstream.connect(l.p.sessions.ctx, callLimits{global: l.p.calls, perSession: l.p.cfg.MaxCalls})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		conn.Close()
		return nil, errShuttingDown
	}
	l.conn = conn
	l.readers.Add(1)
	l.mu.Unlock()
	go l.read(conn)
	if probed {
		return conn, nil
	}
	speaks, err = l.discover(ctx, conn, meta)
	if err == nil {
		l.mu.Lock()
		l.probed, l.speaks = true, speaks
		l.mu.Unlock()
		if !speaks {
			err = errNoStateless
		}
	}
	if err != nil {
		l.drop(conn)
		return nil, err
	}
	return conn, nil
}

// discover asks the upstream whether it speaks the stateless revision.
func (l *statelessLink) discover(ctx context.Context, conn mcp.Connection, meta json.RawMessage) (bool, error) {
	params, _ := json.Marshal(map[string]json.RawMessage{"_meta": meta})
	result, err := l.roundTrip(ctx, conn, "server/discover", params)
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return false, nil // an error answer: it does not speak it
	}
	if err != nil {
		return false, err
	}
	var dr struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(result, &dr) != nil {
		return false, nil
	}
	return slices.Contains(dr.SupportedVersions, statelessVersion), nil
}

// add registers a call under a key of the link's own.
func (l *statelessLink) add(id jsonrpc.ID, token json.RawMessage) (string, *linkCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	key := fmt.Sprintf("atlas-proxy-link-%d", l.seq)
	c := &linkCall{id: id, token: token, out: make(chan jsonrpc.Message, 64)}
	l.waiters[key] = c
	return key, c
}

func (l *statelessLink) forget(key string) {
	l.mu.Lock()
	delete(l.waiters, key)
	l.mu.Unlock()
}

// drop forgets conn and closes it, so that the next request connects
// again.
func (l *statelessLink) drop(conn mcp.Connection) {
	l.mu.Lock()
	if l.conn == conn {
		l.conn = nil
	}
	l.mu.Unlock()
	conn.Close()
}

// close ends the link's connection and waits for its reader (at
// shutdown); the link connects no more.
func (l *statelessLink) close() {
	l.mu.Lock()
	conn := l.conn
	l.conn, l.closed = nil, true
	l.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	l.readers.Wait()
}

// read delivers what the upstream sends on conn to the calls waiting for
// it, until conn ends; then every call still waiting is failed.
func (l *statelessLink) read(conn mcp.Connection) {
	defer l.readers.Done()
	for {
		msg, err := conn.Read(l.p.sessions.ctx)
		if errors.Is(err, errBadLine) {
			continue
		}
		if err != nil {
			l.mu.Lock()
			if l.conn == conn {
				// Not dropped by the link nor closed at shutdown: the
				// upstream failed.
				l.conn = nil
				l.p.metrics.upstream.Inc()
				l.p.log.Warn("upstream failed (stateless link)", "err", err)
			}
			for k, c := range l.waiters {
				delete(l.waiters, k)
				close(c.out)
			}
			l.mu.Unlock()
			conn.Close()
			return
		}
		var key string
		switch m := msg.(type) {
		case *jsonrpc.Response:
			key, _ = m.ID.Raw().(string)
		case *jsonrpc.Request:
			if m.IsCall() {
				// The stateless revision has no server requests; the
				// server must not wait for an answer that cannot come.
				conn.Write(l.p.sessions.ctx, errorResponse(m.ID, CodeUpstream,
					"the proxy's stateless clients cannot answer "+m.Method, nil))
				continue
			}
			if m.Method == "notifications/progress" {
				var p struct {
					Token json.RawMessage `json:"progressToken"`
				}
				json.Unmarshal(m.Params, &p)
				json.Unmarshal(p.Token, &key)
			}
		}
		l.mu.Lock()
		c := l.waiters[key]
		if _, isResp := msg.(*jsonrpc.Response); isResp && c != nil {
			delete(l.waiters, key)
		}
		l.mu.Unlock()
		if c == nil {
			continue // nothing of a request in flight: no one to tell
		}
		select {
		case c.out <- msg:
		default: // a client that does not read its progress loses some
		}
	}
}

// serveLinked answers one stateless request over the link. It reports
// false, having written nothing, when the upstream does not speak the
// stateless revision. release gives back the request's place among the
// calls in flight, once the call has ended upstream (which, for a call
// answered with an event stream, may be after the client's request).
func (p *Proxy) serveLinked(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, release func()) bool {
	handed := false
	defer func() {
		if !handed {
			release()
		}
	}()
	ctx := r.Context()
	var params map[string]json.RawMessage
	if len(req.Params) > 0 && json.Unmarshal(req.Params, &params) != nil {
		params = nil
	}
	var meta map[string]json.RawMessage
	json.Unmarshal(params["_meta"], &meta)
	clientMeta, _ := json.Marshal(meta)

	l := p.link
	conn, err := l.get(ctx, clientMeta)
	if errors.Is(err, errNoStateless) {
		return false
	}
	if err != nil {
		if req.IsCall() {
			writeRPC(w, statusUpstream, errorResponse(req.ID, CodeUpstream, "upstream: "+err.Error(), nil))
		} else {
			http.Error(w, "upstream: "+err.Error(), statusUpstream)
		}
		return true
	}
	if !req.IsCall() {
		conn.Write(ctx, req)
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	if req.Method == "tools/call" && p.cfg.Policy.active() {
		if resp := p.checkLinked(ctx, conn, req, meta); resp != nil {
			writeRPC(w, http.StatusOK, resp)
			return true
		}
	}
	// The progress token, if any, is the link's too: the call's key.
	key, call := l.add(req.ID, meta["progressToken"])
	if call.token != nil {
		meta["progressToken"], _ = json.Marshal(key)
		params["_meta"], _ = json.Marshal(meta)
	}
	out := *req
	out.ID, _ = jsonrpc.MakeID(key)
	if params != nil {
		out.Params, _ = json.Marshal(params)
	}
	if err := conn.Write(ctx, &out); err != nil {
		l.forget(key)
		writeRPC(w, statusUpstream, errorResponse(req.ID, CodeUpstream, "upstream: "+err.Error(), nil))
		return true
	}
	// The call goes on without the client's request once its answer is
	// an event stream (see callstream.go); it is cancelled upstream when
	// its context ends first.
	callCtx, cancel, keep := p.streams.callContext(r)
	abandon := func() {
		l.forget(key)
		cancel, _ := json.Marshal(map[string]any{"requestId": key, "reason": "the client went away"})
		conn.Write(context.WithoutCancel(ctx), &jsonrpc.Request{Method: "notifications/cancelled", Params: cancel})
	}
	// next is the call's next message in the client's terms: a progress
	// notification with the client's token, or the answer with its id.
	next := func() (jsonrpc.Message, bool) {
		for {
			var msg jsonrpc.Message
			var ok bool
			select {
			case msg, ok = <-call.out:
			case <-callCtx.Done():
				abandon()
				return nil, false
			}
			if !ok {
				return errorResponse(req.ID, CodeUpstream, "upstream: the connection ended before the answer", nil), true
			}
			switch m := msg.(type) {
			case *jsonrpc.Request: // progress
				var np map[string]json.RawMessage
				if json.Unmarshal(m.Params, &np) != nil {
					continue
				}
				np["progressToken"] = call.token
				m.Params, _ = json.Marshal(np)
				return m, true
			case *jsonrpc.Response:
				m.ID = req.ID
				if m.Error == nil && req.Method == "tools/list" {
					s := &session{p: p, tools: map[string]*toolState{}}
					m.Result = s.labelList(m.Result)
				}
				return m, true
			}
		}
	}
	sse := acceptsStreamable(r)
	for {
		msg, alive := next()
		if !alive {
			cancel()
			return true
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			cancel()
			writeRPC(w, http.StatusOK, resp)
			return true
		}
		if !sse {
			continue // a client that takes no stream gets no progress
		}
		if !keep() {
			cancel() // the client is gone
			continue // next abandons the call
		}
		// Progress: the answer is an event stream from here on.
		handed = true
		p.streams.serve(w, r, cancel, func(emit func([]byte)) {
			for {
				if data, err := jsonrpc.EncodeMessage(msg); err == nil {
					emit(data)
				}
				if _, answer := msg.(*jsonrpc.Response); answer {
					return
				}
				var alive bool
				if msg, alive = next(); !alive {
					return
				}
			}
		}, release)
		return true
	}
}

// checkLinked applies the policy to a stateless tools/call over the link:
// the upstream's tools are listed first, with the call's own _meta, so
// that the policy knows the classes of the tool it names (see
// checkStateless).
func (p *Proxy) checkLinked(ctx context.Context, conn mcp.Connection, req *jsonrpc.Request, meta map[string]json.RawMessage) *jsonrpc.Response {
	s := &session{p: p, tools: map[string]*toolState{}}
	if _, err := callName(req.Params); err != nil {
		return s.check(req)
	}
	delete(meta, "progressToken")
	return s.checkListed(req, func(cursor string) (json.RawMessage, error) {
		lp := map[string]any{"_meta": meta}
		if cursor != "" {
			lp["cursor"] = cursor
		}
		params, _ := json.Marshal(lp)
		return p.link.roundTrip(ctx, conn, "tools/list", params)
	})
}

// roundTrip sends one request of the proxy's own over the link and
// returns its result.
func (l *statelessLink) roundTrip(ctx context.Context, conn mcp.Connection, method string, params json.RawMessage) (json.RawMessage, error) {
	key, call := l.add(jsonrpc.ID{}, nil)
	defer l.forget(key)
	id, _ := jsonrpc.MakeID(key)
	if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: params}); err != nil {
		return nil, err
	}
	for {
		select {
		case m, ok := <-call.out:
			if !ok {
				return nil, errors.New("the connection ended before the answer")
			}
			if resp, ok := m.(*jsonrpc.Response); ok {
				if resp.Error != nil {
					return nil, resp.Error
				}
				return resp.Result, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
