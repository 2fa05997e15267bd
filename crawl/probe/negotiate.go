package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version negotiation, as the specification's revision 2026-07-28
// describes it: a client asks a server at the newest revision first, by
// server/discover, with no handshake and no session; a server that answers
// with an error (or an HTTP error status, or an HTTP answer without its
// JSON-RPC answer within a third of the deadline) is asked again, on a fresh connection, by initialize at the
// newest revision with a handshake (RequestedVersion); a server whose
// POSTs fail with a 4xx is then tried over legacy HTTP+SSE (see
// Prober.Probe).

// StatelessVersion is the protocol revision of the stateless generation:
// no initialize, no Mcp-Session-Id; server/discover first, and every
// request carries the protocol version, client capabilities and client
// info in its _meta and the MCP-Protocol-Version header (the SDK adds
// both).
const StatelessVersion = "2026-07-28"

// Generations of the protocol, as servers.jsonl.gz records them.
const (
	// GenerationStateless is a server reached by server/discover.
	GenerationStateless = "stateless"
	// GenerationSession is a server reached by initialize.
	GenerationSession = "session"
)

// ProtocolVersions are the revisions the crawl asks servers for, newest
// first: StatelessVersion by server/discover, then RequestedVersion by
// initialize (a server may answer initialize with an older revision).
func ProtocolVersions() []string { return []string{StatelessVersion, RequestedVersion} }

// MethodDiscover is the request of the stateless generation that opens
// every exchange.
const MethodDiscover = "server/discover"

// codeUnsupportedVersion is the JSON-RPC error of a request at a revision
// the server does not speak; its data.supported lists those it does.
const codeUnsupportedVersion = -32022

// RPCError is a JSON-RPC error object as a server sent it.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// serverError is the first JSON-RPC error of the server in err's chain,
// or nil. The SDK's own rejection of a transport failure is not one.
func serverError(err error) *RPCError {
	var we *jsonrpc.Error
	if err == nil || !errors.As(err, &we) || we.Code == rejectedCode {
		return nil
	}
	e := &RPCError{Code: we.Code, Message: we.Message}
	if len(we.Data) > 0 {
		e.Data = compact(ReplaceInvalidUTF8(we.Data))
	}
	return e
}

// supportedVersions is the data.supported of an unsupported-version error.
func (e *RPCError) supportedVersions() []string {
	if e.Code != codeUnsupportedVersion || len(e.Data) == 0 {
		return nil
	}
	var d struct {
		Supported []string `json:"supported"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return nil
	}
	return d.Supported
}

// errNoInitialize ends the stateless attempt where the SDK would fall back
// to initialize on the same connection: the crawl falls back on a fresh one,
// so that each attempt has its own HTTP state and its own failure.
var errNoInitialize = errors.New("server/discover failed")

// discoverTimeout bounds the wait for server/discover: a server of an older
// revision may never answer a method it does not know, and initialize must
// still have time. It is a share of the probe's one deadline, not a
// deadline of its own: it stands still with it (see withStepDeadline).
func (p *Prober) discoverTimeout() time.Duration {
	return p.opt.Timeout / 3
}

// silent is the record of a server that sent no byte of an answer (no
// connection, or no HTTP status line) to server/discover within
// discoverTimeout. Initialize is not tried: a server that says nothing to
// one request says nothing to the next, and a hang must cost one wait,
// not two. The record is fixed, whatever the load, the concurrency, or
// which goroutine saw the wait end: the same silence gives the same bytes.
func (p *Prober) silent(r Result) Result {
	r.mem.release()
	return Result{
		Transport: r.Transport, ErrorKind: KindTimeout, FailedStep: MethodDiscover,
		Error: fmt.Sprintf("no answer within %v (during %s)", p.discoverTimeout(), MethodDiscover),
	}
}

// tryStateless opens a stateless exchange by server/discover and lists the
// tools. It returns the status of the discover POST, and whether the
// server should be asked again by initialize: after an error answer, an
// HTTP error status other than an authorization challenge, an answer that
// is not a usable discover result, or an HTTP answer whose JSON-RPC answer
// did not come within discoverTimeout; not after no answer at all (see
// silent), nor after a failure of the connection, the address policy, a redirect or
// the byte cap, which initialize would meet again.
func (p *Prober) tryStateless(ctx context.Context, u *url.URL) (Result, int, bool) {
	dctx, cancel := withStepDeadline(ctx, p.discoverTimeout())
	defer cancel()
	// The HTTP layer of the attempt ends with the discover share when
	// server/discover was not answered in it: the SDK's own follow-ups
	// (a notifications/cancelled with a wait of its own) must not hold
	// the slot longer. Once answered, the listing runs on the probe's
	// deadline. Budget waits pause the step's deadline and the probe's.
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	hs := p.newHTTPState(context.WithValue(hctx, deadlineKey{}, dctx.Value(deadlineKey{})), u)
	r := Result{Transport: TransportStreamable, mem: hs.mem}
	capt := &capture{hs: hs, discoverOnly: true}
	t := &mcp.StreamableClientTransport{
		Endpoint: u.String(), HTTPClient: hs.client(), MaxRetries: -1, DisableStandaloneSSE: true,
		MaxEventSize: p.maxEventSize(),
	}
	endWithStep := context.AfterFunc(dctx, hcancel)
	cs, err := newClient().Connect(dctx, &captureTransport{inner: t, capt: capt}, &mcp.ClientSessionOptions{ProtocolVersion: StatelessVersion})
	if !endWithStep() && err == nil {
		// Answered as the share ran out: the HTTP layer is already
		// ended, so the attempt is too.
		cs.Close()
		err = context.Cause(dctx)
	}
	status := int(hs.initStatus.Load())
	init := capt.initial()
	if err != nil && !hs.answered.Load() && dctx.Err() != nil && (ctx.Err() == nil || deadlinePassed(ctx)) {
		return p.silent(r), 0, false
	}
	if err != nil {
		r = capt.keep(r)
		if r.SupportedVersions == nil {
			r.SupportedVersions = init.supported
		}
		hf := hs.failure.Load()
		retry := ctx.Err() == nil && (dctx.Err() != nil || hf == nil || !finalKinds[hf.Kind])
		return p.fail(ctx, hs, r, MethodDiscover, err), status, retry
	}
	defer cs.Close()
	r.Initialized, r.Generation = true, GenerationStateless
	if ir := cs.InitializeResult(); ir != nil {
		r.ProtocolVersion = ir.ProtocolVersion
	}
	r.SupportedVersions = init.supported
	r.ServerInfo, r.Capabilities, r.Instructions, r.ToolsCapability = init.serverInfo, init.capabilities, init.instructions, init.tools
	return p.listTools(ctx, hs, cs, capt, r), status, false
}

// finalKinds are the failures of server/discover after which initialize is
// not tried: it would meet them again.
var finalKinds = map[string]bool{
	KindConnect: true, KindBlocked: true, KindAuthRequired: true, KindRedirect: true, KindTooManyBytes: true,
}

// parseDiscoverResult keeps what a server/discover result says of the
// server: its versions, capabilities, instructions, and the serverInfo of
// its _meta.
func parseDiscoverResult(raw json.RawMessage) initFields {
	var res struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      json.RawMessage            `json:"capabilities"`
		Instructions      *string                    `json:"instructions"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	var ir initFields
	if json.Unmarshal(ReplaceInvalidUTF8(raw), &res) != nil {
		return ir
	}
	ir.answered = true
	ir.supported = res.SupportedVersions
	ir.serverInfo, ir.capabilities, ir.instructions = compact(res.Meta["io.modelcontextprotocol/serverInfo"]), compact(res.Capabilities), res.Instructions
	ir.tools = hasTools(res.Capabilities)
	return ir
}

// cacheHints are the ttlMs and cacheScope of a tools/list result.
type cacheHints struct {
	ttlMs *int64
	scope string
}

func (h *cacheHints) read(res map[string]json.RawMessage) {
	var ttl int64
	if raw, ok := res["ttlMs"]; ok && json.Unmarshal(raw, &ttl) == nil {
		h.ttlMs = &ttl
	}
	if raw, ok := res["cacheScope"]; ok {
		_ = json.Unmarshal(raw, &h.scope)
	}
}
