package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
)

// JSON-RPC error codes the proxy answers with itself. They are in the
// range JSON-RPC leaves to implementations (-32000 to -32099).
const (
	// CodeUpstream answers a request the upstream server could not: it
	// failed, could not be reached, or ended the stream before answering.
	CodeUpstream = -32050
	// CodeDenied answers a tools/call the policy refuses.
	CodeDenied = -32051
	// CodeParse answers a line of the stdio client that is not JSON-RPC
	// (JSON-RPC's parse error).
	CodeParse = -32700
	// CodeInvalidRequest answers a request reusing the id of one still in
	// flight (JSON-RPC's invalid request).
	CodeInvalidRequest = -32600
)

// session relays one downstream session to its own upstream session. Every
// message passes unchanged except tools/list results (labelled, and
// filtered by --hide) and tools/call requests the policy refuses (answered
// here, never sent upstream).
type session struct {
	p    *Proxy
	down mcp.Connection
	up   mcp.Connection

	// writeDown delivers a message to the client; the HTTP downstream
	// queues what its standalone stream cannot take yet.
	writeDown func(context.Context, jsonrpc.Message) error
	// withdraw takes a queued message back out of the HTTP downstream's
	// outbox, reporting whether it was still there (nil for stdio).
	withdraw func(jsonrpc.Message) bool

	// clientGone is set once the client has gone away: the upstream's
	// end that follows is ours, not a failure.
	clientGone atomic.Bool

	// mu guards the fields below it. Rules: it is never held while a
	// message is written to either side or a channel is sent on (a slow
	// peer must not stall the other direction); a call's pending entry
	// and its waiter are added together and removed together, by
	// whoever settles the call first (the answer, the call's
	// cancellation, the upstream's failure), so that an id is free again
	// the moment its call is settled.
	mu sync.Mutex
	// pending are the client's requests upstream has not answered, by id
	// (jsonrpc.ID.Raw), with their method: a tools/list answer is
	// labelled, and when the upstream fails every pending request is
	// answered with the error. Guarded by mu.
	pending map[any]pendingCall
	// tools are the classes of the tools this session's tools/list results
	// named, by name, for the policy on tools/call: the union over every
	// tool listed under the name, so that a second tool of the same name
	// cannot make a hidden one callable. Guarded by mu.
	tools map[string]*toolState
	// upErr is the upstream's failure once it has failed: every later call
	// is answered with it. Guarded by mu.
	upErr error
	// progress maps the progress tokens of pending calls (their JSON
	// text) to the calls, so that their progress goes on their own
	// streams. Guarded by mu.
	progress map[string]jsonrpc.ID
	// waiters take the answers of calls the proxy made itself (call), by
	// id, instead of the client. Guarded by mu.
	waiters map[any]chan callAnswer
	// timers are the bounds of server requests waiting for the client's
	// standalone stream (see bound); ended is set when the relay ends,
	// after which no timer starts and none fires: the relay stops them
	// all and waits (timerWG) for any that already fired. Guarded by mu
	// (timerWG.Add only under mu, with ended false).
	timers  map[*time.Timer]struct{}
	ended   bool
	timerWG sync.WaitGroup
	// initAnswer is the upstream's answer to the client's initialize,
	// made ahead by the HTTP downstream (see servePOST): the initialize
	// that then comes through the transport is answered with it. Guarded
	// by mu.
	initAnswer *jsonrpc.Response
}

// callAnswer is the answer to a call the proxy made itself, or the
// upstream's failure.
type callAnswer struct {
	resp *jsonrpc.Response
	err  error
}

// pendingCall is a request in flight upstream.
type pendingCall struct {
	id     jsonrpc.ID
	method string
	// token is the call's progress token (its JSON text), "" for none.
	token string
}

// toolState is what the policy knows of a tool name.
type toolState struct {
	classes []string
	// unlabelled: a tool of this name was listed that the census decoder
	// rejects, so its classes are unknown.
	unlabelled bool
}

func (t *toolState) add(ent *labelEntry) {
	if ent == nil {
		t.unlabelled = true
		return
	}
	for _, c := range ent.classes {
		if !slices.Contains(t.classes, c) {
			t.classes = append(t.classes, c)
		}
	}
}

// relay runs the session until either side ends or ctx is cancelled, then
// closes both. up is the upstream's connection when the caller has made it
// already (nil: relay connects). It returns the upstream's failure, if
// that is what ended it.
func (p *Proxy) relay(ctx context.Context, down, up mcp.Connection, writeDown func(context.Context, jsonrpc.Message) error, withdraw func(jsonrpc.Message) bool) error {
	return p.newSession(down, up, writeDown, withdraw).run(ctx)
}

// newSession is a session not yet relaying (see relay).
func (p *Proxy) newSession(down, up mcp.Connection, writeDown func(context.Context, jsonrpc.Message) error, withdraw func(jsonrpc.Message) bool) *session {
	if writeDown == nil {
		writeDown = down.Write
	}
	return &session{p: p, down: down, up: up, writeDown: writeDown, withdraw: withdraw,
		pending: map[any]pendingCall{}, tools: map[string]*toolState{}, waiters: map[any]chan callAnswer{},
		progress: map[string]jsonrpc.ID{},
		timers:   map[*time.Timer]struct{}{}}
}

// run relays the session (see relay).
func (s *session) run(ctx context.Context) error {
	p, down, up := s.p, s.down, s.up
	p.metrics.sessions.Inc()
	defer p.metrics.sessions.Dec()
	defer down.Close()
	if up == nil {
		var err error
		if up, err = p.connectUpstream(ctx); err != nil {
			s.refuseFirst(ctx, err)
			return err
		}
		s.up = up // before any reader: only stdio sessions connect here
	}
	defer up.Close()

	defer s.stopTimers()

	// Neither side's end cancels the other: an upstream that failed
	// leaves the session open (the client's later calls are answered with
	// the failure, until it goes away), and a client that went away ends
	// its upstream session by closing it. Each returns its own error; the
	// upstream's is the session's result.
	var g errgroup.Group
	var clientErr error
	g.Go(func() error {
		clientErr = s.clientToServer(ctx)
		s.clientGone.Store(true)
		up.Close() // the client went away: end its upstream session
		return clientErr
	})
	g.Go(func() error {
		err := s.serverToClient(ctx)
		if err == nil {
			down.Close()
		}
		return err
	})
	err := g.Wait()
	if err != nil && err == clientErr {
		s.p.log.Warn("client connection failed", "err", err)
	}
	return err
}

// stopTimers stops every bound timer and waits for those that fired.
func (s *session) stopTimers() {
	s.mu.Lock()
	s.ended = true
	for t := range s.timers {
		t.Stop()
	}
	clear(s.timers)
	s.mu.Unlock()
	s.timerWG.Wait()
}

// call sends req upstream on the proxy's own behalf and waits for its
// answer; err is the upstream's failure (or ctx's), not a JSON-RPC error
// answer.
func (s *session) call(ctx context.Context, req *jsonrpc.Request) (*jsonrpc.Response, error) {
	ch := make(chan callAnswer, 1)
	s.mu.Lock()
	if s.upErr != nil {
		err := s.upErr
		s.mu.Unlock()
		return nil, err
	}
	if prev, ok := s.pending[req.ID.Raw()]; ok {
		s.mu.Unlock()
		return errorResponse(req.ID, CodeInvalidRequest,
			fmt.Sprintf("request id %v is already in use by a %s request in flight", req.ID.Raw(), prev.method), nil), nil
	}
	s.pending[req.ID.Raw()] = pendingCall{id: req.ID, method: req.Method}
	s.waiters[req.ID.Raw()] = ch
	s.mu.Unlock()
	if err := s.up.Write(ctx, req); err != nil {
		s.take(req.ID)
		s.mu.Lock()
		delete(s.waiters, req.ID.Raw())
		s.mu.Unlock()
		return nil, fmt.Errorf("upstream: %w", err)
	}
	select {
	case a := <-ch:
		return a.resp, a.err
	case <-ctx.Done():
	}
	// Cancelled: the call leaves nothing behind, and its id is free at
	// once. The entries are removed only if they are still this call's
	// (an answer may have settled it meanwhile).
	s.mu.Lock()
	if s.waiters[req.ID.Raw()] == ch {
		delete(s.waiters, req.ID.Raw())
		delete(s.pending, req.ID.Raw())
	}
	s.mu.Unlock()
	if req.Method != "initialize" { // an initialize must not be cancelled
		params, _ := json.Marshal(map[string]any{"requestId": req.ID.Raw(), "reason": "the client went away"})
		s.up.Write(context.WithoutCancel(ctx), &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
	}
	return nil, ctx.Err()
}

// failed returns the upstream's failure, once it has failed.
func (s *session) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.upErr
}

// forward relays one message of the client's outside the downstream
// transport (see Proxy.serveDirect) and returns the answer to a call: the
// upstream's, the policy's, or the upstream's failure as a JSON-RPC error.
func (s *session) forward(ctx context.Context, msg jsonrpc.Message) *jsonrpc.Response {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		if ok {
			s.p.metrics.requests.WithLabelValues(methodLabel(req.Method)).Inc()
			if req.Method == "tools/call" && s.p.cfg.Policy.active() {
				return nil
			}
		}
		s.up.Write(ctx, msg)
		return nil
	}
	s.p.metrics.requests.WithLabelValues(methodLabel(req.Method)).Inc()
	if req.Method == "tools/call" && s.p.cfg.Policy.active() {
		if resp := s.check(req); resp != nil {
			return resp
		}
	}
	resp, err := s.call(ctx, req)
	if err != nil {
		return errorResponse(req.ID, CodeUpstream, err.Error(), nil)
	}
	return resp
}

// waiter takes the waiter for id, if the proxy made that call.
func (s *session) waiter(id jsonrpc.ID) chan callAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.waiters[id.Raw()]
	delete(s.waiters, id.Raw())
	return ch
}

// answeredAhead returns the answer made ahead for the client's initialize
// m, once.
func (s *session) answeredAhead(m *jsonrpc.Request) *jsonrpc.Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.initAnswer; a != nil && m.Method == "initialize" && a.ID == m.ID {
		s.initAnswer = nil
		return a
	}
	return nil
}

// connectUpstream opens an upstream session, counting and logging a
// failure.
func (p *Proxy) connectUpstream(ctx context.Context) (mcp.Connection, error) {
	up, err := p.cfg.Upstream.connect(ctx, callLimits{global: p.calls, perSession: p.cfg.MaxSessionCalls,
		translated: func() {
			p.metrics.translated.Inc()
			p.log.Info("session translated: the client speaks an older revision than the upstream's only one, " + statelessVersion)
		},
		resumed: func() { p.metrics.resumed.WithLabelValues("upstream").Inc() }})
	if err != nil {
		p.metrics.upstream.Inc()
		err = fmt.Errorf("upstream: %w", err)
		p.log.Warn("upstream connect failed", "err", err)
		return nil, err
	}
	return up, nil
}

// refuseFirst answers the client's first request with err: a session whose
// upstream cannot be reached is an error to the client, not silence.
func (s *session) refuseFirst(ctx context.Context, err error) {
	for {
		msg, rerr := s.down.Read(ctx)
		if rerr != nil {
			if errors.Is(rerr, errBadLine) {
				continue
			}
			return
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			s.writeDown(ctx, errorResponse(req.ID, CodeUpstream, err.Error(), nil))
			return
		}
	}
}

func errorResponse(id jsonrpc.ID, code int64, message string, data json.RawMessage) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message, Data: data}}
}

// clientToServer relays the client's messages upstream until the client
// goes away: its end (or ctx's) is nil, a failure of its connection the
// error.
func (s *session) clientToServer(ctx context.Context) error {
	for {
		msg, err := s.down.Read(ctx)
		if errors.Is(err, errBadLine) {
			continue // answered by the connection; the session goes on
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil || s.clientGone.Load() {
				return nil
			}
			return fmt.Errorf("client: %w", err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			s.p.metrics.requests.WithLabelValues(methodLabel(m.Method)).Inc()
			if a := s.answeredAhead(m); a != nil {
				s.writeDown(ctx, a)
				continue
			}
			if m.IsCall() {
				if resp := s.admit(m); resp != nil {
					s.writeDown(ctx, resp)
					continue
				}
			} else if m.Method == "tools/call" && s.p.cfg.Policy.active() {
				// A tools/call without an id is no call the policy can
				// answer; an upstream may still run it.
				s.p.log.Info("tools/call notification dropped: the policy cannot answer it")
				continue
			} else if m.Method == "notifications/cancelled" {
				s.forget(m.Params)
			}
		case *jsonrpc.Response:
			s.p.metrics.requests.WithLabelValues("response").Inc()
		}
		if err := s.up.Write(ctx, msg); err != nil {
			// The upstream refused this message; a call gets the error as
			// its answer, and the session goes on: the upstream's reads
			// say whether it is gone.
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && s.take(req.ID) != "" {
				s.writeDown(ctx, errorResponse(req.ID, CodeUpstream, "upstream: "+err.Error(), nil))
			}
		}
	}
}

// admit registers a call as pending, or returns the answer that refuses
// it: the policy's, an id already in flight (its answer would be taken
// for the other's), or the upstream's failure once it has failed.
func (s *session) admit(m *jsonrpc.Request) *jsonrpc.Response {
	if m.Method == "tools/call" && s.p.cfg.Policy.active() {
		if resp := s.check(m); resp != nil {
			return resp
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.upErr != nil {
		return errorResponse(m.ID, CodeUpstream, s.upErr.Error(), nil)
	}
	if prev, ok := s.pending[m.ID.Raw()]; ok {
		return errorResponse(m.ID, CodeInvalidRequest,
			fmt.Sprintf("request id %v is already in use by a %s request in flight", m.ID.Raw(), prev.method), nil)
	}
	pc := pendingCall{id: m.ID, method: m.Method, token: progressToken(m.Params)}
	if pc.token != "" {
		if s.progress == nil {
			s.progress = map[string]jsonrpc.ID{}
		}
		s.progress[pc.token] = m.ID
	}
	s.pending[m.ID.Raw()] = pc
	return nil
}

// forget drops a cancelled request from pending: the server need not
// answer it.
func (s *session) forget(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	s.take(id)
}

// take removes id from pending and returns its method ("" when it was not
// pending).
func (s *session) take(id jsonrpc.ID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.pending[id.Raw()]
	if ok {
		delete(s.pending, id.Raw())
		if m.token != "" && s.progress[m.token] == m.id {
			delete(s.progress, m.token)
		}
	}
	return m.method
}

// serverToClient relays the upstream's messages to the client until the
// upstream ends; then it answers every pending request with the error.
func (s *session) serverToClient(ctx context.Context) error {
	for {
		msg, err := s.up.Read(ctx)
		if errors.Is(err, errBadLine) {
			s.p.log.Warn("upstream sent a line that is not JSON-RPC: skipped", "err", err)
			continue
		}
		if err != nil {
			if ctx.Err() != nil || s.clientGone.Load() {
				s.failPending(ctx, errors.New("upstream: the session ended"))
				return nil
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("the upstream server closed the session")
			}
			err = fmt.Errorf("upstream: %w", err)
			// Counted before the client hears of it, so that whoever
			// sees the error sees the count.
			s.p.metrics.upstream.Inc()
			s.p.log.Warn("upstream failed", "err", err)
			s.failPending(ctx, err)
			return err
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			method := s.take(resp.ID)
			if method == "" && s.p.cfg.Policy.active() {
				// An answer to nothing in flight (a second answer to a
				// tools/list, say) would pass unlabelled and unfiltered.
				s.p.log.Warn("upstream answer to no request in flight dropped", "id", resp.ID.Raw())
				continue
			}
			if method == "tools/list" && resp.Error == nil {
				resp.Result = s.labelList(resp.Result)
			}
			if ch := s.waiter(resp.ID); ch != nil {
				ch <- callAnswer{resp: resp}
				continue
			}
		}
		large := messageSize(msg) >= reclaimAbove
		wctx := ctx
		if id, ok := s.relatedTo(msg); ok {
			wctx = withRelated(ctx, id)
		}
		err = s.writeDown(wctx, msg)
		if large && s.p.cfg.Reclaim != nil {
			s.p.cfg.Reclaim()
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && errors.Is(err, errQueued) {
			s.bound(ctx, req)
		} else if err != nil {
			s.p.log.Debug("client did not take a message", "err", err)
		}
	}
}

// relater is an upstream connection that knows which call a message it
// read belongs to (the call on whose stream it came).
type relater interface {
	relatedTo(jsonrpc.Message) (jsonrpc.ID, bool)
}

// relatedTo is the client's call in flight that a server's message (not
// an answer) belongs to: the call on whose stream the upstream sent it,
// or the one whose progress token a progress notification names.
func (s *session) relatedTo(msg jsonrpc.Message) (jsonrpc.ID, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return jsonrpc.ID{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.up.(relater); ok {
		if id, ok := r.relatedTo(msg); ok {
			if _, live := s.pending[id.Raw()]; live {
				return id, true
			}
		}
	}
	if req.Method == "notifications/progress" {
		if tok := progressTokenOf(req.Params); tok != "" {
			id, ok := s.progress[tok]
			return id, ok
		}
	}
	return jsonrpc.ID{}, false
}

// progressToken is the JSON text of a request's params._meta.progressToken,
// "" when it has none.
func progressToken(params json.RawMessage) string {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return ""
	}
	return tokenText(p.Meta.Token)
}

// progressTokenOf is the JSON text of a progress notification's token.
func progressTokenOf(params json.RawMessage) string {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return ""
	}
	return tokenText(p.Token)
}

// tokenText normalises a token's JSON text (a string or a number) so that
// the same token spelled with other whitespace or escapes matches.
func tokenText(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// bound gives a server's request that waits for the client's standalone
// stream OutboxWait to be delivered; then the server gets an error answer
// instead, so that the call waiting on it goes on rather than hangs.
// The timer is the session's: the relay's end stops it (see stopTimers).
func (s *session) bound(ctx context.Context, req *jsonrpc.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(s.p.cfg.OutboxWait, func() {
		s.mu.Lock()
		_, live := s.timers[t]
		delete(s.timers, t)
		if !live || s.ended {
			s.mu.Unlock()
			return
		}
		s.timerWG.Add(1)
		s.mu.Unlock()
		defer s.timerWG.Done()
		if s.withdraw == nil || !s.withdraw(req) {
			return
		}
		s.p.log.Warn("server request not delivered: the client opened no stream for it", "method", req.Method)
		s.up.Write(context.WithoutCancel(ctx), errorResponse(req.ID, CodeUpstream,
			"the proxy's client has no open stream to receive "+req.Method+" (no standalone GET stream)", nil))
	})
	s.timers[t] = struct{}{}
}

// failPending answers every request still waiting for the upstream with
// err, so that no client call hangs on a server that is gone.
func (s *session) failPending(ctx context.Context, err error) {
	s.mu.Lock()
	calls := make([]pendingCall, 0, len(s.pending))
	for _, c := range s.pending {
		calls = append(calls, c)
	}
	clear(s.pending)
	clear(s.progress)
	s.upErr = err
	s.mu.Unlock()
	for _, c := range calls {
		if ch := s.waiter(c.id); ch != nil {
			ch <- callAnswer{err: err}
			continue
		}
		s.writeDown(context.WithoutCancel(ctx), errorResponse(c.id, CodeUpstream, err.Error(), nil))
	}
}

// maxListLabelBytes bounds the label bytes one tools/list result gains:
// a list of millions of tiny properties must not make the proxy hold ten
// times its size in labels. Tools past the bound pass unlabelled (and are
// dropped under --hide). A real list of 5,000 tools gains about 5 MB.
const maxListLabelBytes = 32 << 20

// labelList returns a tools/list result with the labels added and the
// hidden tools dropped, and records the labels for the policy. A tool is
// hidden by its own classes; a call is judged by the name's, the union
// over every tool listed under it (see Policy.Hide). With --hide, a tool
// the census decoder rejects is dropped too (its classes are unknown), and
// its name refused on call.
func (s *session) labelList(result json.RawMessage) json.RawMessage {
	pol := s.p.cfg.Policy
	var ents []*labelEntry
	budget := int64(maxListLabelBytes)
	private := cacheScopePrivate(result)
	err := eachTool(result, func(tool []byte) {
		var ent *labelEntry
		var hit bool
		var err error
		switch {
		case budget > 0 && private:
			ent, err = s.p.labels.labelPrivate(tool)
		case budget > 0:
			ent, hit, err = s.p.labels.label(tool)
		default:
			err = errors.New("the list's labels passed their bound")
		}
		if err != nil {
			s.p.log.Debug("tool left unlabelled", "err", err)
			ent = nil
		} else {
			budget -= int64(len(ent.meta))
			if hit {
				s.p.metrics.cacheHits.Inc()
			}
		}
		ents = append(ents, ent)
		if !pol.active() {
			return
		}
		names := []string{}
		if ent != nil {
			names = append(names, ent.name)
		} else {
			names = looseNames(tool)
		}
		s.mu.Lock()
		for _, n := range names {
			st := s.tools[n]
			if st == nil {
				st = &toolState{}
				s.tools[n] = st
			}
			st.add(ent)
		}
		s.mu.Unlock()
	})
	if err != nil {
		s.p.log.Warn("tools/list result passed unlabelled", "err", err)
		return result
	}
	i := 0
	label := func([]byte) *labelEntry { i++; return ents[i-1] }
	keep := func(tool []byte, ent *labelEntry) bool {
		if !pol.active() {
			return true
		}
		var c string
		if ent == nil {
			if len(pol.Hide) == 0 {
				return true
			}
			c = "unlabelled"
		} else {
			// Each tool by its own classes: what is listed does not
			// depend on which tools came before it, on this page or an
			// earlier one (see Policy.Hide).
			c = pol.hiddenBy(ent.name, &toolState{classes: ent.classes})
		}
		if c == "" {
			return true
		}
		s.p.metrics.hidden.WithLabelValues(c).Inc()
		s.p.log.Info("tool hidden", "tool", toolNameForLog(ent, tool), "class", c)
		return false
	}
	out, st, err := rewriteList(make([]byte, 0, len(result)+len(result)/2), result, label, keep)
	if err != nil {
		s.p.log.Warn("tools/list result passed unlabelled", "err", err)
		return result
	}
	s.p.metrics.labelled.Add(float64(st.labelled))
	s.p.metrics.unlabelled.Add(float64(st.unlabelled))
	if st.forged > 0 {
		s.p.metrics.forged.Add(float64(st.forged))
		s.p.log.Warn("upstream tools carried a param-risk label of their own: replaced", "tools", st.forged)
	}
	return out
}

// cacheScopePrivate reports whether a result says its cacheScope is
// "private" (revision 2026-07-28): it is one client's.
func cacheScopePrivate(result []byte) bool {
	i := skipWS(result, 0)
	if i >= len(result) || result[i] != '{' {
		return false
	}
	s, e, _, err := lastMember(result, i, "cacheScope")
	if err != nil || s < 0 {
		return false
	}
	var scope string
	return json.Unmarshal(result[s:e], &scope) == nil && scope == "private"
}

func toolNameForLog(ent *labelEntry, tool []byte) string {
	if ent != nil {
		return ent.name
	}
	return strings.Join(looseNames(tool), ",")
}

// looseNames are the names a tool the census decoder rejects may be called
// by: the string value of every member whose key is "name" in any case
// (decoders that match keys case-insensitively may take any of them).
func looseNames(tool []byte) []string {
	var names []string
	i := skipWS(tool, 0)
	members(tool, i, func(m member) {
		if k, ok := keyText(m.key); ok && strings.EqualFold(k, "name") {
			var n string
			if json.Unmarshal(tool[m.start:m.end], &n) == nil {
				names = append(names, n)
			}
		}
	})
	return names
}

// keyText decodes a raw member key.
func keyText(raw []byte) (string, bool) {
	var k string
	return k, json.Unmarshal(raw, &k) == nil
}

// callName reads the tool name of a tools/call's params, for the policy.
// It fails unless the params are an object holding exactly one member
// whose key is "name" in any case (Go's encoding/json, which mcp-go
// decodes with, matches keys case-insensitively and keeps the last),
// spelled exactly "name", with a string value: what the proxy checks must
// be what every upstream runs.
func callName(params json.RawMessage) (string, error) {
	i := skipWS(params, 0)
	if i >= len(params) || params[i] != '{' {
		return "", errors.New("params are not an object")
	}
	var name []byte
	n := 0
	exact := true
	_, err := members(params, i, func(m member) {
		k, ok := keyText(m.key)
		if !ok || !strings.EqualFold(k, "name") {
			return
		}
		n++
		exact = exact && k == "name"
		name = params[m.start:m.end]
	})
	switch {
	case err != nil:
		return "", err
	case n == 0:
		return "", errors.New("params have no name")
	case n > 1 || !exact:
		return "", errors.New("params spell the name key ambiguously")
	}
	var s string
	if err := json.Unmarshal(name, &s); err != nil {
		return "", errors.New("the name is not a string")
	}
	return s, nil
}

// check applies the policy to a tools/call: nil lets it through, otherwise
// the error answer. A call whose tool name cannot be read unambiguously is
// refused: the policy cannot know which tool it would run.
func (s *session) check(req *jsonrpc.Request) *jsonrpc.Response {
	name, err := callName(req.Params)
	if err != nil {
		s.p.metrics.denied.WithLabelValues("unreadable").Inc()
		s.p.log.Info("tool call denied", "why", err)
		return errorResponse(req.ID, CodeDenied, "tools/call refused by the atlas-reproduce proxy policy: "+err.Error(), nil)
	}
	pol := s.p.cfg.Policy
	if pol.allowed(name) {
		return nil
	}
	s.mu.Lock()
	st := s.tools[name]
	var class, why string
	switch {
	case st == nil:
		class, why = "unlisted", "no tools/list result of this session named it, so the policy cannot check its classes; list the tools first"
	case st.unlabelled:
		class, why = "unlabelled", "a tool listed under this name could not be labelled, so the policy cannot check its classes"
	case pol.hiddenBy(name, st) != "":
		class = pol.hiddenBy(name, st)
		why = "it carries " + class + ", which the proxy hides (--hide)"
	case pol.deniedBy(name, st) != "":
		class = pol.deniedBy(name, st)
		why = "it carries " + class + ", which the proxy denies (--deny)"
	}
	s.mu.Unlock()
	if class == "" {
		return nil
	}
	s.p.metrics.denied.WithLabelValues(class).Inc()
	s.p.log.Info("tool call denied", "tool", name, "class", class)
	data, _ := json.Marshal(map[string]any{"tool": name, "class": class})
	return errorResponse(req.ID, CodeDenied, fmt.Sprintf("tool %q refused by the atlas-reproduce proxy policy: %s", name, why), data)
}

// reclaimAbove is the message size from which relaying it asks the
// command to give memory back to the operating system (Config.Reclaim).
const reclaimAbove = 4 << 20
