package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/jsontext"
	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
	"github.com/atlas-reproduce/atlas-reproduce/internal/defaults"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// Transport names, as servers.jsonl.gz records them.
const (
	TransportStreamable = "streamable-http"
	TransportSSE        = "sse"
)

// RequestedVersion is the protocol revision the client asks for in
// initialize, the newest of the revisions with a handshake: servers answer
// with it or with an older revision they speak (2025-06-18, 2025-03-26,
// 2024-11-05); the SDK accepts every released revision. Servers of the
// stateless revision are asked first, by server/discover (see
// StatelessVersion).
const RequestedVersion = "2025-11-25"

// clientInfo is the clientInfo the crawl declares in initialize, made
// afresh for each client.
func clientInfo() *mcp.Implementation {
	return &mcp.Implementation{Name: "atlas-reproduce", Version: buildinfo.Read().Version}
}

// newClient is the crawl's MCP client. Its capabilities are the SDK's
// defaults (roots, with listChanged); release.json records them as sent
// (see Declared), since servers may list other tools to a client that
// declares roots.
func newClient() *mcp.Client {
	return mcp.NewClient(clientInfo(), nil)
}

// Defaults of Options.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultMaxTools = 20000
	DefaultMaxBytes = 64 << 20
	DefaultMaxPages = 1000
)

// Options bound what one server may cost.
type Options struct {
	// Timeout is the deadline of the whole exchange with one server:
	// connect, initialize, every tools/list page, closing.
	Timeout time.Duration
	// MaxTools is the most tools kept from one server; more is an error.
	MaxTools int
	// MaxBytes is the most response bytes read from one server.
	MaxBytes int64
	// MaxPages is the most tools/list pages requested from one server.
	MaxPages int
	// UserAgent is sent with every request.
	UserAgent string
	// AllowAddr says whether the crawl may connect to an address; nil
	// allows only public unicast addresses (see PublicAddr). It is checked
	// on every connection, after DNS resolution and after redirects, so a
	// public name that resolves to an internal address is refused too.
	AllowAddr func(netip.Addr) bool
	// Budget, when set, holds the response bytes of all probes sharing it
	// to one limit (see Budget).
	Budget *Budget
	// Transport is the HTTP transport under every request; nil means a
	// fresh one owned by the Prober, which honours AllowAddr. A Transport
	// given here must do its own address policy.
	Transport http.RoundTripper
}

// AnyAddr allows every address: for scanning a server on one's own machine
// or network.
func AnyAddr(netip.Addr) bool { return true }

// ErrBlocked marks a connection refused by the address policy: a runner
// that fetches through the Prober's transport reports it as blocked.
var ErrBlocked = errors.New("address not allowed")

// DialControl refuses, as a net.Dialer's Control, a connection to an
// address AllowAddr does not allow: the address policy, held on the peer
// actually dialled.
func (o *Options) DialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%s: %w", address, ErrBlocked)
	}
	if !o.AllowAddr(ap.Addr()) {
		return fmt.Errorf("%s: %w (not a public address)", ap.Addr(), ErrBlocked)
	}
	return nil
}

// Defaults fills the zero fields with the defaults; NewProber calls it.
func (o *Options) Defaults() {
	defaults.Set(&o.Timeout, DefaultTimeout)
	defaults.Set(&o.MaxTools, DefaultMaxTools)
	defaults.Set(&o.MaxBytes, DefaultMaxBytes)
	defaults.Set(&o.MaxPages, DefaultMaxPages)
	if o.AllowAddr == nil {
		o.AllowAddr = PublicAddr
	}
	if o.UserAgent == "" {
		o.UserAgent = buildinfo.Read().UserAgent()
	}
}

// Result is what probing one server found.
type Result struct {
	// Reachable says the exchange completed and every tool was kept.
	Reachable bool
	// Initialized says the version negotiation succeeded (server/discover
	// for a stateless server, initialize and notifications/initialized
	// for the others); the fields below it are what the server answered,
	// kept whether or not the rest succeeded.
	Initialized bool
	// Transport and ProtocolVersion are those of the negotiated session;
	// Generation says how it was negotiated (GenerationStateless or
	// GenerationSession). ProtocolVersion and the server's answer are
	// also kept when initialize succeeded and a later step of the
	// handshake failed.
	Transport       string
	ProtocolVersion string
	Generation      string
	// SupportedVersions are the revisions the server says it speaks: the
	// supportedVersions of server/discover, or the data.supported of an
	// unsupported-version error (-32022); nil when it said nothing.
	SupportedVersions []string
	// ServerInfo and Capabilities are the raw serverInfo and capabilities
	// of the initialize (or server/discover) result; Instructions its
	// instructions.
	ServerInfo   json.RawMessage
	Capabilities json.RawMessage
	Instructions *string
	// ToolsCapability says the server declared the tools capability; a
	// server without it is reachable with no tools, and not asked for any.
	ToolsCapability bool
	// Tools are the tools as the server sent them, one compact JSON object
	// each, in the order of the pages.
	Tools []json.RawMessage
	// ToolsTTLMs and ToolsCacheScope are the ttlMs and cacheScope of the
	// first tools/list page, when the server sent them (2026-07-28).
	ToolsTTLMs      *int64
	ToolsCacheScope string
	// ErrorKind and Error describe why an unreachable server is so.
	ErrorKind, Error string
	// FailedStep names the step that failed: "server/discover",
	// "initialize", "notifications/initialized", "tools/list page 2", ...
	FailedStep string
	// RPCError is the JSON-RPC error object the server answered the
	// failed step with, as it sent it, whether in a 200 or in an HTTP
	// error status; nil when it sent none.
	RPCError *RPCError
	// ResourceMetadata is the resource_metadata URL of the
	// WWW-Authenticate challenge of an auth_required server.
	ResourceMetadata string
	// Elapsed is the wall time of the probe.
	Elapsed time.Duration
	// SkippedLines counts the lines of a stdio server's output that could
	// not begin a message and were left out, as the TypeScript SDK's
	// client leaves them out.
	SkippedLines int

	// mem holds the bytes of the answer against the budget until the
	// result is written out.
	mem *account
	// Runner, for a packaged server, says which runner ran it and what.
	Runner *RunnerInfo
}

// Release gives the bytes of the result back to the memory budget; the
// crawl calls it once the result is written. It is safe to call twice.
func (r *Result) Release() {
	r.mem.release()
}

// RunnerInfo says which runner ran a packaged server, and what it ran.
type RunnerInfo struct {
	// Runner is the registry type whose runner ran it: npm, pypi, oci
	// or mcpb.
	Runner string `json:"runner"`
	// Argv is the command run in the sandbox.
	Argv []string `json:"argv,omitempty"`
	// Resolved pins what was run: name@version, an image's manifest
	// digest, a bundle's SHA-256.
	Resolved string `json:"resolved,omitempty"`
	// UncheckedDigest is a bundle run although its entry names no
	// fileSha256: nothing held the bytes run to what was published.
	UncheckedDigest bool `json:"unchecked_digest,omitempty"`
}

// Prober probes servers; it is safe for concurrent use.
type Prober struct {
	opt     Options
	base    http.RoundTripper
	ownBase *http.Transport
}

// NewProber returns a Prober with opt's bounds (zero fields take the
// defaults). Close releases its idle connections.
func NewProber(opt Options) *Prober {
	opt.Defaults()
	p := &Prober{opt: opt, base: opt.Transport}
	if p.base == nil {
		p.ownBase = &http.Transport{
			// No proxy: the address policy needs the real peer.
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: opt.Timeout, KeepAlive: 30 * time.Second, Control: p.opt.DialControl}).DialContext,
			ForceAttemptHTTP2:   true,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     30 * time.Second,
			// No TLS or header timeouts: the probe's deadline covers them.
		}
		p.base = p.ownBase
	}
	return p
}

// Options are the Prober's bounds, the defaults filled in.
func (p *Prober) Options() Options { return p.opt }

// Transport is the Prober's HTTP transport, with its address policy: a
// runner fetches a package's image or bundle through it, so that the
// policy that holds for remotes holds for packages' hosts too.
func (p *Prober) Transport() http.RoundTripper { return p.base }

// Close closes the idle connections of the Prober's own transport.
func (p *Prober) Close() {
	if p.ownBase != nil {
		p.ownBase.CloseIdleConnections()
	}
}

// isSSEURL says the URL names a legacy SSE endpoint by the convention every
// HTTP+SSE server follows: a path ending in /sse.
func isSSEURL(u *url.URL) bool {
	return strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse")
}

// Probe speaks MCP to the server at u: initialize, notifications/initialized,
// then tools/list until the last page. Streamable HTTP comes first; the
// legacy HTTP+SSE transport is tried when the initialize POST fails with an
// HTTP 4xx status, as the specification's backwards-compatibility section
// describes, except after a 401 or an authorization challenge: the same
// credentials would be refused again. A URL whose path ends in /sse is
// tried over legacy SSE first, and over Streamable HTTP when the SSE GET
// fails with a 4xx (a Streamable HTTP endpoint may live at /sse). Every
// failure is reported in the Result; ctx's cancellation is reported as a
// timeout only when the probe's own deadline passed.
//
// With a Budget, the bytes of the answer stay charged to it until
// Result.Release.
func (p *Prober) Probe(ctx context.Context, u *url.URL) (r Result) {
	start := time.Now()
	// The deadline stands still while the probe waits for the memory
	// budget (see Budget): only the server's time counts.
	ctx, cancel := withProbeDeadline(ctx, p.opt.Timeout)
	defer cancel()
	defer func() { r.Elapsed = time.Since(start) }()
	defer recoverClientFailure(&r)
	first, second := p.tryStreamable, p.trySSE
	if isSSEURL(u) {
		first, second = p.trySSE, p.tryStreamable
	}
	r, status := first(ctx, u)
	if r.Reachable || r.Initialized || status < 400 || status >= 500 || r.ErrorKind == KindAuthRequired || ctx.Err() != nil {
		return r
	}
	r2, _ := second(ctx, u)
	if r2.Reachable || r2.Initialized {
		return r2
	}
	// Both failed: say so, keeping the first answer's kind.
	r.Error = fmt.Sprintf("%s; %s: %s", r.Error, r2.Transport, r2.Error)
	return r
}

// tryStreamable negotiates over Streamable HTTP as the specification's
// version negotiation describes: server/discover at the stateless revision
// first, then initialize (see tryStateless). The status is that of the
// first POST of the last attempt.
func (p *Prober) tryStreamable(ctx context.Context, u *url.URL) (Result, int) {
	r, status, again := p.tryStateless(ctx, u)
	if !again {
		return r, status
	}
	r.Release()
	hs := p.newHTTPState(ctx, u)
	r2 := p.session(ctx, hs, &mcp.StreamableClientTransport{
		Endpoint: u.String(), HTTPClient: hs.client(), MaxRetries: -1, DisableStandaloneSSE: true,
		MaxEventSize: p.maxEventSize(),
	}, TransportStreamable)
	if r2.SupportedVersions == nil {
		r2.SupportedVersions = r.SupportedVersions
	}
	return r2, int(hs.initStatus.Load())
}

// trySSE runs a session over legacy HTTP+SSE; the status is that of the
// GET that opens the stream.
func (p *Prober) trySSE(ctx context.Context, u *url.URL) (Result, int) {
	hs := p.newHTTPState(ctx, u)
	r := p.session(ctx, hs, &mcp.SSEClientTransport{Endpoint: u.String(), HTTPClient: hs.client(),
		MaxEventSize: p.maxEventSize()}, TransportSSE)
	return r, int(hs.getStatus.Load())
}

// maxEventSize lifts the SDK's own cap on one server-sent event (16 MiB by
// default) to the byte cap: a tools/list answer of 5,000 tools runs past
// 16 MiB, and the byte cap already bounds what one server may send.
func (p *Prober) maxEventSize() int {
	return int(min(p.opt.MaxBytes+1, math.MaxInt32))
}

// session runs one MCP session over t, opened by initialize, and collects
// the tools.
func (p *Prober) session(ctx context.Context, hs *httpState, t mcp.Transport, transport string) Result {
	r := Result{Transport: transport, mem: hs.mem}
	capt := &capture{hs: hs}
	client := newClient()
	cs, err := client.Connect(ctx, &captureTransport{inner: t, capt: capt}, &mcp.ClientSessionOptions{ProtocolVersion: RequestedVersion})
	init := capt.initial()
	if err != nil {
		step := "initialize"
		if init.answered {
			// initialize was answered: what it said is kept, and the
			// step that failed is named.
			step = capt.lastSent()
			r.ProtocolVersion, r.Generation = init.version, GenerationSession
			r.ServerInfo, r.Capabilities, r.Instructions = init.serverInfo, init.capabilities, init.instructions
		}
		return p.fail(ctx, hs, capt.keep(r), step, err)
	}
	defer cs.Close()
	r.Initialized, r.Generation = true, GenerationSession
	if ir := cs.InitializeResult(); ir != nil {
		r.ProtocolVersion = ir.ProtocolVersion
	}
	r.ServerInfo, r.Capabilities, r.Instructions, r.ToolsCapability = init.serverInfo, init.capabilities, init.instructions, init.tools
	return p.listTools(ctx, hs, cs, capt, r)
}

// listTools asks an open session for every tools/list page.
func (p *Prober) listTools(ctx context.Context, hs *httpState, cs *mcp.ClientSession, capt *capture, r Result) Result {
	if !r.ToolsCapability {
		r.Reachable = true
		return r
	}
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		stage := fmt.Sprintf("tools/list page %d", page)
		if page > p.opt.MaxPages {
			return p.fail(ctx, hs, r, stage, probeErrf(KindTooManyPages, "", "more than %d tools/list pages", p.opt.MaxPages))
		}
		if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}); err != nil {
			return p.fail(ctx, hs, capt.keep(r), stage, err)
		}
		var hints *cacheHints
		if page == 1 {
			hints = &cacheHints{}
		}
		tools, next, err := parsePageHints(capt.takePage(), hints)
		if hints != nil {
			r.ToolsTTLMs, r.ToolsCacheScope = hints.ttlMs, hints.scope
		}
		if err != nil {
			return p.fail(ctx, hs, r, stage, err)
		}
		if len(r.Tools)+len(tools) > p.opt.MaxTools {
			return p.fail(ctx, hs, r, stage, probeErrf(KindTooManyTools, "", "more than %d tools", p.opt.MaxTools))
		}
		r.Tools = append(r.Tools, tools...)
		if next == "" {
			break
		}
		if seen[next] {
			return p.fail(ctx, hs, r, stage, probeErrf(KindCursorLoop, "", "nextCursor %q was returned before", next))
		}
		seen[next] = true
		cursor = next
	}
	// The line run will read must be one the census decoder accepts.
	if _, err := census.NewDecoder().Decode(AppendToolsRecord(nil, "x", r.Tools)); err != nil {
		return p.fail(ctx, hs, r, "tools/list", probeErrf(KindInvalidTools, "", "the census decoder rejects the tools: %w", err))
	}
	r.Reachable = true
	return r
}

// fail turns err, met during stage, into an unreachable Result. The kind
// is the one decided where the failure was first seen: the deadline, then
// what the HTTP layer recorded (the SDK reports it only as text), then a
// Error in err's chain, then a JSON-RPC error from the server.
func (p *Prober) fail(ctx context.Context, hs *httpState, r Result, stage string, err error) Result {
	r.Reachable, r.Tools = false, nil
	r.mem.release()
	r.mem = nil
	r.FailedStep = stage
	if r.RPCError == nil {
		r.RPCError = serverError(err)
	}
	if rm := hs.authMeta.Load(); rm != nil {
		r.ResourceMetadata = *rm
	}
	var we *jsonrpc.Error
	switch hf := hs.failure.Load(); {
	case deadlinePassed(ctx):
		// Only the stage is kept: the wrapped text depends on which
		// goroutine saw the end first, and the record must not.
		r.ErrorKind, r.Error = KindTimeout, fmt.Sprintf("no complete answer within %v (during %s)", p.opt.Timeout, stage)
	case hf != nil && hf.Kind == KindTooManyBytes:
		r.ErrorKind, r.Error = hf.Kind, fmt.Sprintf("%v (during %s)", hf.Err, stage)
	case hf != nil:
		r.ErrorKind, r.Error = hf.Kind, fmt.Sprintf("%s: %v", stage, hf)
	case asProbeError(err) != nil:
		r.ErrorKind, r.Error = asProbeError(err).Kind, fmt.Sprintf("%s: %v", stage, err)
	case errors.As(err, &we) && we.Code != rejectedCode:
		r.ErrorKind, r.Error = KindRPCError, fmt.Sprintf("%s: %v", stage, err)
	default:
		r.ErrorKind, r.Error = KindProtocol, fmt.Sprintf("%s: %v", stage, err)
	}
	return r
}

// rejectedCode is the code of the SDK's jsonrpc2.ErrRejected, which wraps
// every transport failure: it is not the server's JSON-RPC error.
const rejectedCode = -32005

// parsePage reads the raw result of one tools/list response. Keys are
// matched exactly and the last duplicate wins, as Python's json reads them.
func parsePage(raw json.RawMessage) (tools []json.RawMessage, next string, err error) {
	return parsePageHints(raw, nil)
}

// parsePageHints is parsePage that also reads the page's cache hints into
// hints, when not nil.
func parsePageHints(raw json.RawMessage, hints *cacheHints) (tools []json.RawMessage, next string, err error) {
	if raw == nil {
		return nil, "", probeErrf(KindProtocol, "", "no result was captured")
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, "", probeErrf(KindProtocol, "", "result is not an object: %w", err)
	}
	if hints != nil {
		hints.read(res)
	}
	t, ok := res["tools"]
	if !ok || bytes.Equal(t, []byte("null")) {
		return nil, "", probeErrf(KindProtocol, "", "result has no \"tools\" list")
	}
	if c, ok := res["nextCursor"]; ok && !bytes.Equal(c, []byte("null")) {
		if err := json.Unmarshal(c, &next); err != nil {
			return nil, "", probeErrf(KindProtocol, "", "\"nextCursor\" is not a string")
		}
	}
	// One compacted copy of the list, split in place: a large answer
	// is not copied once more per tool.
	var b bytes.Buffer
	b.Grow(len(t))
	if err := json.Compact(&b, t); err != nil {
		return nil, "", probeErr(KindInvalidJSON, "", err)
	}
	list := ReplaceInvalidUTF8(b.Bytes())
	if len(list) == 0 || list[0] != '[' {
		return nil, "", probeErrf(KindProtocol, "", "\"tools\" is not a list")
	}
	return splitArray(list), next, nil
}

// recoverClientFailure, deferred by a probe, turns a panic into the
// probe's result: hostile input must not take the crawl down, even through
// a bug in the client; the server becomes a record of it.
func recoverClientFailure(r *Result) {
	if v := recover(); v != nil {
		r.Release()
		*r = Result{ErrorKind: KindProtocol, Error: fmt.Sprintf("client failure: %v", v)}
	}
}

// splitArray returns the elements of a compact, valid JSON array as
// subslices of it.
func splitArray(a []byte) []json.RawMessage {
	out := []json.RawMessage{}
	depth, start := 0, 1
	var str jsontext.Strings
	for i, c := range a {
		switch {
		case str.Inside(c):
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth == 0 && i > start {
				out = append(out, a[start:i:i])
			}
		case c == ',' && depth == 1:
			out = append(out, a[start:i:i])
			start = i + 1
		}
	}
	return out
}

// AppendToolsRecord appends the server_tools.jsonl.gz line of a server:
// {"server_id": id, "tools": [tool, ...]} and a newline.
func AppendToolsRecord(b []byte, id string, tools []json.RawMessage) []byte {
	b = append(b, `{"server_id": `...)
	b = jsontext.AppendString(b, id)
	b = append(b, `, "tools": [`...)
	for i, t := range tools {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, t...)
	}
	return append(b, "]}\n"...)
}

// captureTransport hands the SDK a connection that keeps the raw results of
// initialize and tools/list (see the package comment).
type captureTransport struct {
	inner mcp.Transport
	capt  *capture
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: c, capt: t.capt}, nil
}

type capture struct {
	hs      *httpState
	mu      sync.Mutex
	methods map[any]string // request id -> method, for calls in flight
	init    initFields
	page    json.RawMessage
	// discoverOnly ends the session at initialize: the stateless attempt
	// does not fall back inside one connection (see tryStateless).
	discoverOnly bool
	last         string    // the method of the last message sent
	rpcErr       *RPCError // the last JSON-RPC error the server answered
	supported    []string  // the versions an unsupported-version error named
}

// initFields is what the crawl keeps of the initialize (or
// server/discover) result.
type initFields struct {
	answered                 bool
	version                  string
	supported                []string
	serverInfo, capabilities json.RawMessage
	instructions             *string
	tools                    bool
}

// lastSent is the method of the last message written.
func (c *capture) lastSent() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// keep adds to r what the server said of a failure: its JSON-RPC error
// and the versions it named.
func (c *capture) keep(r Result) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.RPCError == nil {
		r.RPCError = c.rpcErr
	}
	if r.SupportedVersions == nil {
		r.SupportedVersions = c.supported
	}
	return r
}

// noteError keeps a JSON-RPC error of the server; the caller holds mu.
func (c *capture) noteError(e *RPCError) {
	if e == nil {
		return
	}
	c.rpcErr = e
	if s := e.supportedVersions(); s != nil {
		c.supported = s
	}
}

func (c *capture) initial() initFields {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.init
}

func (c *capture) takePage() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.page
	c.page = nil
	return p
}

type captureConn struct {
	mcp.Connection
	capt *capture
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	c.capt.mu.Lock()
	if c.capt.discoverOnly && req.Method == "initialize" {
		c.capt.mu.Unlock()
		return errNoInitialize
	}
	c.capt.last = req.Method
	if req.ID.IsValid() {
		if c.capt.methods == nil {
			c.capt.methods = map[any]string{}
		}
		c.capt.methods[req.ID.Raw()] = req.Method
	}
	c.capt.mu.Unlock()
	err := c.Connection.Write(ctx, msg)
	if err != nil {
		// A JSON-RPC error in an HTTP error status comes back here.
		c.capt.mu.Lock()
		c.capt.noteError(serverError(err))
		c.capt.mu.Unlock()
	}
	return err
}

// emptyPage is what the SDK's session sees of every tools/list result.
var emptyPage = json.RawMessage(`{"tools":[]}`)

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		// The legacy SSE transport decodes each event as it is read,
		// and says so with a typed error: name it here, where it is met.
		var se *json.SyntaxError
		if errors.As(err, &se) {
			c.capt.hs.fail(probeErr(KindInvalidJSON, "reading a message", err))
		}
		return msg, err
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return msg, err
	}
	c.capt.mu.Lock()
	defer c.capt.mu.Unlock()
	method := c.capt.methods[resp.ID.Raw()]
	delete(c.capt.methods, resp.ID.Raw())
	if resp.Error != nil {
		c.capt.noteError(serverError(resp.Error))
		return msg, err
	}
	switch method {
	case MethodDiscover:
		c.capt.init = parseDiscoverResult(resp.Result)
	case "initialize":
		c.capt.init = parseInitResult(resp.Result)
		// The SDK tells a wrapped connection nothing of the negotiated
		// version, so the HTTP layer adds the header.
		c.capt.hs.setProtocolVersion(c.capt.init.version)
	case "tools/list":
		// The session sees an empty page in its place, so the decoded
		// bytes can be kept without a copy.
		c.capt.page = resp.Result
		resp.Result = emptyPage
	}
	return msg, err
}

// parseInitResult keeps serverInfo and capabilities compacted, and the
// instructions, with invalid UTF-8 replaced as in the tools.
func parseInitResult(raw json.RawMessage) initFields {
	var res struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		Capabilities    json.RawMessage `json:"capabilities"`
		Instructions    *string         `json:"instructions"`
	}
	var ir initFields
	if json.Unmarshal(ReplaceInvalidUTF8(raw), &res) != nil {
		return ir
	}
	ir.answered = true
	ir.version = res.ProtocolVersion
	ir.serverInfo, ir.capabilities, ir.instructions = compact(res.ServerInfo), compact(res.Capabilities), res.Instructions
	ir.tools = hasTools(res.Capabilities)
	return ir
}

// hasTools says raw capabilities declare tools.
func hasTools(capabilities json.RawMessage) bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(capabilities, &caps) != nil {
		return false
	}
	t, ok := caps["tools"]
	return ok && !bytes.Equal(t, []byte("null"))
}

func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// Scan probes the one server at rawURL: the client of the crawl, for the
// scan command. It returns the server_id and what the probe found; only a
// URL that cannot be crawled is an error.
func Scan(ctx context.Context, rawURL string, opt Options) (string, Result, error) {
	id, u, err := Normalise(rawURL)
	if err != nil {
		return "", Result{}, err
	}
	p := NewProber(opt)
	defer p.Close()
	return id, p.Probe(ctx, u), nil
}
