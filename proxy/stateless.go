package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stateless revision of MCP (2026-07-28 and later) has no initialize
// and no session: every request stands alone, carrying the protocol
// version, the client's capabilities and its info in its _meta (and the
// version in the MCP-Protocol-Version header), and server/discover takes
// the handshake's place. The proxy relays such a request to the upstream
// as it came, headers and _meta included, and labels a tools/list answer
// on the way back; to a legacy upstream the request's refusal (-32022,
// naming the versions it speaks) is relayed as it came too, and the
// client falls back to initialize.

// statelessVersion is the first revision without sessions.
const statelessVersion = "2026-07-28"

// legacyVersions are the revisions the proxy's sessions speak, newest
// first: what a stateless request is told when the upstream cannot be
// reached statelessly (a command, an SSE server).
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// codeUnsupportedVersion is the error of a request at a revision the
// server does not speak (mcp.CodeUnsupportedProtocolVersion).
const codeUnsupportedVersion = -32022

// statelessRequest reports whether a POST without a session is a request
// of the stateless revision, by its header or its _meta, and returns its
// version.
func statelessRequest(r *http.Request, body []byte) (string, bool) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= statelessVersion {
		return v, true
	}
	if v := metaVersion(body); v >= statelessVersion {
		return v, true
	}
	return "", false
}

// metaVersion is the protocol version a request names in its params'
// _meta (revision 2026-07-28), or "".
func metaVersion(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	var msg struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return ""
	}
	var v string
	if json.Unmarshal(msg.Params.Meta[mcp.MetaKeyProtocolVersion], &v) != nil {
		return ""
	}
	return v
}

// serveStateless relays one request of the stateless revision.
func (p *Proxy) serveStateless(w http.ResponseWriter, r *http.Request, body []byte, version string) {
	msgs, err := decodeLine(body)
	if err != nil || len(msgs) != 1 {
		http.Error(w, "a stateless request is one JSON-RPC message", http.StatusBadRequest)
		return
	}
	req, _ := msgs[0].(*jsonrpc.Request)
	if p.statelessClient == nil && req != nil {
		if err := p.calls.Acquire(r.Context(), 1); err != nil {
			return // the client went away
		}
		p.metrics.requests.WithLabelValues(methodLabel(req.Method)).Inc()
		done := p.serveLinked(w, r, req, sync.OnceFunc(func() { p.calls.Release(1) }))
		if done {
			return
		}
	}
	if p.statelessClient == nil {
		// A command or an SSE server has no stateless form here: the
		// client is told which revisions the proxy speaks, and falls back.
		if req == nil || !req.IsCall() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		data, _ := json.Marshal(map[string]any{"supported": legacyVersions, "requested": version})
		writeRPC(w, http.StatusBadRequest, errorResponse(req.ID, codeUnsupportedVersion,
			fmt.Sprintf("protocol version %q is not supported through this proxy's upstream", version), data))
		return
	}
	if req != nil {
		p.metrics.requests.WithLabelValues(methodLabel(req.Method)).Inc()
	}
	// A stateless request is an upstream call of its own: it waits its
	// turn among the calls in flight, as a session's do. The place is
	// given back when the call ends, which for a call answered with an
	// event stream may be after the client's request (see callstream.go).
	if err := p.calls.Acquire(r.Context(), 1); err != nil {
		return // the client went away
	}
	release := sync.OnceFunc(func() { p.calls.Release(1) })
	handed := false
	defer func() {
		if !handed {
			release()
		}
	}()
	if req != nil && req.Method == "tools/call" && p.cfg.Policy.active() {
		if !req.IsCall() {
			w.WriteHeader(http.StatusAccepted) // dropped: see clientToServer
			return
		}
		if resp := p.checkStateless(r, req); resp != nil {
			writeRPC(w, http.StatusOK, resp)
			return
		}
	}
	ctx, cancel, keep := p.streams.callContext(r)
	resp, err := p.postUpstream(ctx, r.Header, body)
	if err != nil {
		cancel()
		if req != nil && req.IsCall() {
			writeRPC(w, statusUpstream, errorResponse(req.ID, CodeUpstream, "upstream: "+err.Error(), nil))
			return
		}
		http.Error(w, "upstream: "+err.Error(), statusUpstream)
		return
	}
	relabel := req != nil && req.IsCall() && req.Method == "tools/list"
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 != 2 || ct != "text/event-stream" {
		defer cancel()
		defer resp.Body.Close()
		p.relayStateless(w, resp, relabel)
		return
	}
	if !keep() {
		resp.Body.Close() // the client is gone
		cancel()
		return
	}
	handed = true
	p.streams.serve(w, r, cancel, func(emit func([]byte)) {
		p.produceStateless(resp, req, relabel, emit)
	}, release)
}

// produceStateless emits the events of an upstream's event stream
// answering req, labelled when relabel. A stream that ends before the
// answer to a call gets an error answer for it (the upstream's stream of
// a stateless call cannot be resumed: the SDKs' servers number none).
func (p *Proxy) produceStateless(resp *http.Response, req *jsonrpc.Request, relabel bool, emit func([]byte)) {
	defer resp.Body.Close()
	answered := false
	err := readEvents(resp.Body, p.maxMessage(), func(data []byte) {
		if len(bytes.TrimSpace(data)) == 0 {
			return // a priming event, or a keep-alive: nothing to relay
		}
		if req != nil && req.IsCall() && !answered {
			if m, err := jsonrpc.DecodeMessage(data); err == nil {
				if r, ok := m.(*jsonrpc.Response); ok && r.ID == req.ID {
					answered = true
				}
			}
		}
		if relabel {
			data = p.labelAnswer(data)
		}
		emit(data)
	})
	if req == nil || !req.IsCall() || answered || resp.Request.Context().Err() != nil {
		return
	}
	why := "upstream: the server ended the stream before answering"
	if err != nil {
		why += ": " + err.Error()
	}
	if data, err := jsonrpc.EncodeMessage(errorResponse(req.ID, CodeUpstream, why, nil)); err == nil {
		emit(data)
	}
}

// labelAnswer labels (and filters) the tools of a tools/list answer; any
// other message is returned as it came.
func (p *Proxy) labelAnswer(data []byte) []byte {
	m, err := jsonrpc.DecodeMessage(data)
	r, ok := m.(*jsonrpc.Response)
	if err != nil || !ok || r.Error != nil {
		return data
	}
	s := &session{p: p, tools: map[string]*toolState{}}
	r.Result = s.labelList(r.Result)
	out, err := jsonrpc.EncodeMessage(r)
	if err != nil {
		return data
	}
	return out
}

// statelessHeaders are the request headers relayed upstream: the MCP ones
// (version, method, name, parameters), never the session's.
func statelessHeaders(dst, src http.Header) {
	for k, vs := range src {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-") && !strings.EqualFold(k, sessionHeader) {
			dst[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
	}
	dst.Set("Content-Type", "application/json")
	dst.Set("Accept", "application/json, text/event-stream")
}

// postUpstream posts body to the upstream with the client's MCP headers.
func (p *Proxy) postUpstream(ctx context.Context, header http.Header, body []byte) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.Upstream.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	statelessHeaders(hreq.Header, header)
	return p.statelessClient.Do(hreq)
}

// relayStateless writes the upstream's answer that is not an event stream
// to the client: its status and body as they came, but a tools/list
// answer labelled (and filtered). An event stream goes through the call's
// own stream (see callstream.go).
func (p *Proxy) relayStateless(w http.ResponseWriter, resp *http.Response, relabel bool) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if v := resp.Header.Get("Content-Type"); v != "" {
		w.Header().Set("Content-Type", v)
	}
	max := p.maxMessage()
	label := func(data []byte) []byte {
		if !relabel {
			return data
		}
		return p.labelAnswer(data)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil || int64(len(data)) > max {
		w.Header().Del("Content-Type")
		http.Error(w, fmt.Sprintf("upstream: an answer of more than %d bytes, or cut off", max), statusUpstream)
		return
	}
	if resp.StatusCode/100 == 2 && ct == "application/json" {
		data = label(data)
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(data)
}

// checkStateless applies the policy to a stateless tools/call: the
// upstream's tools are listed first, with the call's own _meta and
// headers, so that the policy knows the classes of the tool it names (a
// stateless call has no session that listed them).
func (p *Proxy) checkStateless(r *http.Request, req *jsonrpc.Request) *jsonrpc.Response {
	s := &session{p: p, tools: map[string]*toolState{}}
	if _, err := callName(req.Params); err != nil {
		return s.check(req)
	}
	var params struct {
		Meta json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(req.Params, &params)
	header := r.Header.Clone()
	header.Set("Mcp-Method", "tools/list")
	header.Del("Mcp-Name")
	for k := range header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			header.Del(k)
		}
	}
	return s.checkListed(req, func(cursor string) (json.RawMessage, error) {
		lp := map[string]any{}
		if len(params.Meta) > 0 {
			lp["_meta"] = params.Meta
		}
		if cursor != "" {
			lp["cursor"] = cursor
		}
		lreq, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "atlas-proxy-policy", "method": "tools/list", "params": lp})
		resp, err := p.postUpstream(r.Context(), header, lreq)
		if err != nil {
			return nil, err
		}
		return readResult(resp, p.maxMessage())
	})
}

// checkListed applies the policy to a stateless tools/call once the
// upstream's tools are known: list asks for the page after cursor ("" for
// the first), and every page is labelled, up to maxPolicyPages.
func (s *session) checkListed(req *jsonrpc.Request, list func(cursor string) (json.RawMessage, error)) *jsonrpc.Response {
	cursor := ""
	for page := 0; page < maxPolicyPages; page++ {
		result, err := list(cursor)
		if err != nil {
			return errorResponse(req.ID, CodeUpstream, "upstream: listing the tools for the policy: "+err.Error(), nil)
		}
		s.labelList(result)
		var next struct {
			NextCursor string `json:"nextCursor"`
		}
		json.Unmarshal(result, &next)
		if cursor = next.NextCursor; cursor == "" {
			break
		}
	}
	return s.check(req)
}

// maxPolicyPages bounds the tools/list pages read for a stateless call's
// policy check.
const maxPolicyPages = 100

// writeRPC writes one JSON-RPC message as a JSON answer.
func writeRPC(w http.ResponseWriter, code int, msg jsonrpc.Message) {
	data, _ := jsonrpc.EncodeMessage(msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(data)
}
