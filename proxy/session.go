package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

	mu sync.Mutex
	// pending are the client's requests upstream has not answered, by id,
	// with their method: a tools/list answer is labelled, and when the
	// upstream fails every pending request is answered with the error.
	pending map[any]string
	// tools are the labels of the tools this session's tools/list results
	// named, by name, for the policy on tools/call.
	tools map[string]*labelEntry
}

// relay runs the session until either side ends or ctx is cancelled, then
// closes both. It returns the upstream's failure, if that is what ended it.
func (p *Proxy) relay(ctx context.Context, down mcp.Connection, writeDown func(context.Context, jsonrpc.Message) error, withdraw func(jsonrpc.Message) bool) error {
	p.metrics.sessions.Inc()
	defer p.metrics.sessions.Dec()
	defer down.Close()
	if writeDown == nil {
		writeDown = down.Write
	}
	s := &session{p: p, down: down, writeDown: writeDown, withdraw: withdraw, pending: map[any]string{}, tools: map[string]*labelEntry{}}

	up, err := p.cfg.Upstream.connect(ctx)
	if err != nil {
		p.metrics.upstream.Inc()
		err = fmt.Errorf("upstream: %w", err)
		p.log.Warn("upstream connect failed", "err", err)
		s.refuseFirst(ctx, err)
		return err
	}
	s.up = up
	defer up.Close()

	g, gctx := errgroup.WithContext(ctx)
	var upErr error
	g.Go(func() error {
		s.clientToServer(gctx)
		s.clientGone.Store(true)
		up.Close() // the client went away: end its upstream session
		return nil
	})
	g.Go(func() error {
		defer down.Close()
		upErr = s.serverToClient(gctx)
		return nil
	})
	g.Wait()
	if upErr != nil {
		p.log.Warn("upstream failed", "err", upErr)
	}
	return upErr
}

// refuseFirst answers the client's first request with err: a session whose
// upstream cannot be reached is an error to the client, not silence.
func (s *session) refuseFirst(ctx context.Context, err error) {
	msg, rerr := s.down.Read(ctx)
	if rerr != nil {
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		s.writeDown(ctx, errorResponse(req.ID, CodeUpstream, err.Error(), nil))
	}
}

func errorResponse(id jsonrpc.ID, code int64, message string, data json.RawMessage) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message, Data: data}}
}

// clientToServer relays the client's messages upstream until the client
// goes away.
func (s *session) clientToServer(ctx context.Context) {
	for {
		msg, err := s.down.Read(ctx)
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			s.p.metrics.requests.WithLabelValues(methodLabel(m.Method)).Inc()
			if m.IsCall() {
				if m.Method == "tools/call" && s.p.cfg.Policy.active() {
					if resp := s.check(m); resp != nil {
						s.writeDown(ctx, resp)
						continue
					}
				}
				s.mu.Lock()
				s.pending[m.ID.Raw()] = m.Method
				s.mu.Unlock()
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
	}
	return m
}

// serverToClient relays the upstream's messages to the client until the
// upstream ends; then it answers every pending request with the error.
func (s *session) serverToClient(ctx context.Context) error {
	for {
		msg, err := s.up.Read(ctx)
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
			s.failPending(ctx, err)
			return err
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			if method := s.take(resp.ID); method == "tools/list" && resp.Error == nil {
				resp.Result = s.labelList(resp.Result)
			}
		}
		err = s.writeDown(ctx, msg)
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && errors.Is(err, errQueued) {
			s.bound(ctx, req)
		} else if err != nil {
			s.p.log.Debug("client did not take a message", "err", err)
		}
	}
}

// bound gives a server's request that waits for the client's standalone
// stream OutboxWait to be delivered; then the server gets an error answer
// instead, so that the call waiting on it goes on rather than hangs.
func (s *session) bound(ctx context.Context, req *jsonrpc.Request) {
	time.AfterFunc(s.p.cfg.OutboxWait, func() {
		if s.withdraw == nil || !s.withdraw(req) {
			return
		}
		s.p.log.Warn("server request not delivered: the client opened no stream for it", "method", req.Method)
		s.up.Write(context.WithoutCancel(ctx), errorResponse(req.ID, CodeUpstream,
			"the proxy's client has no open stream to receive "+req.Method+" (no standalone GET stream)", nil))
	})
}

// failPending answers every request still waiting for the upstream with
// err, so that no client call hangs on a server that is gone.
func (s *session) failPending(ctx context.Context, err error) {
	s.mu.Lock()
	ids := make([]any, 0, len(s.pending))
	for id := range s.pending {
		ids = append(ids, id)
	}
	clear(s.pending)
	s.mu.Unlock()
	for _, raw := range ids {
		id, _ := jsonrpc.MakeID(raw)
		s.writeDown(context.WithoutCancel(ctx), errorResponse(id, CodeUpstream, err.Error(), nil))
	}
}

// labelList returns a tools/list result with the labels added and the
// hidden tools dropped, and records the labels for the policy.
func (s *session) labelList(result json.RawMessage) json.RawMessage {
	pol := s.p.cfg.Policy
	label := func(tool []byte) *labelEntry {
		ent, hit, err := s.p.labels.label(tool)
		if err != nil {
			s.p.log.Debug("tool left unlabelled", "err", err)
			return nil
		}
		if hit {
			s.p.metrics.cacheHits.Inc()
		}
		s.mu.Lock()
		s.tools[ent.name] = ent
		s.mu.Unlock()
		return ent
	}
	keep := func(ent *labelEntry) bool {
		c := pol.hiddenBy(ent)
		if c == "" {
			return true
		}
		s.p.metrics.hidden.WithLabelValues(c).Inc()
		s.p.log.Info("tool hidden", "tool", ent.name, "class", c)
		return false
	}
	out, st, err := rewriteList(make([]byte, 0, 2*len(result)), result, label, keep)
	if err != nil {
		s.p.log.Warn("tools/list result passed unlabelled", "err", err)
		return result
	}
	s.p.metrics.labelled.Add(float64(st.labelled))
	s.p.metrics.unlabelled.Add(float64(st.unlabelled))
	return out
}

// check applies the policy to a tools/call: nil lets it through, otherwise
// the error answer.
func (s *session) check(req *jsonrpc.Request) *jsonrpc.Response {
	var params map[string]json.RawMessage
	var name string
	if json.Unmarshal(req.Params, &params) != nil || json.Unmarshal(params["name"], &name) != nil {
		return nil // malformed: the server answers it
	}
	pol := s.p.cfg.Policy
	if pol.allowed(name) {
		return nil
	}
	s.mu.Lock()
	ent := s.tools[name]
	s.mu.Unlock()
	var class, why string
	switch {
	case ent == nil:
		class, why = "unlisted", "no tools/list result of this session named it, so the policy cannot check its classes; list the tools first"
	case pol.hiddenBy(ent) != "":
		class = pol.hiddenBy(ent)
		why = "it carries " + class + ", which the proxy hides (--hide)"
	case pol.deniedBy(ent) != "":
		class = pol.deniedBy(ent)
		why = "it carries " + class + ", which the proxy denies (--deny)"
	default:
		return nil
	}
	s.p.metrics.denied.WithLabelValues(class).Inc()
	s.p.log.Info("tool call denied", "tool", name, "class", class)
	data, _ := json.Marshal(map[string]any{"tool": name, "class": class})
	return errorResponse(req.ID, CodeDenied, fmt.Sprintf("tool %q refused by the atlas-reproduce proxy policy: %s", name, why), data)
}
