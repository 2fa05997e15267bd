package crawl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

	"github.com/atlas-reproduce/atlas-reproduce/census"
	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
)

// Transport names, as servers.jsonl.gz records them.
const (
	TransportStreamable = "streamable-http"
	TransportSSE        = "sse"
)

// requestedVersion is the protocol revision the client asks for in
// initialize. Servers answer with it or with an older revision they speak
// (2025-03-26, 2024-11-05); the SDK accepts every released revision.
const requestedVersion = "2025-06-18"

// Defaults of ProbeOptions.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultMaxTools = 20000
	DefaultMaxBytes = 64 << 20
	DefaultMaxPages = 1000
)

// ProbeOptions bound what one server may cost.
type ProbeOptions struct {
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
	// Transport is the HTTP transport under every request; nil means a
	// fresh one owned by the Prober, which honours AllowAddr. A Transport
	// given here must do its own address policy.
	Transport http.RoundTripper
}

// PublicAddr reports whether a is a public unicast address: not loopback,
// private (RFC 1918, RFC 4193), link-local, CGNAT (RFC 6598), unspecified or
// multicast. A crawl of public candidate lists must not become a way to
// reach the crawling machine or its network.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsGlobalUnicast() && !a.IsPrivate() && !cgnat.Contains(a)
}

// AnyAddr allows every address: for scanning a server on one's own machine
// or network.
func AnyAddr(netip.Addr) bool { return true }

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// errBlocked marks a connection refused by the address policy.
var errBlocked = errors.New("address not allowed")

func (o *ProbeOptions) dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%s: %w", address, errBlocked)
	}
	if !o.AllowAddr(ap.Addr()) {
		return fmt.Errorf("%s: %w (not a public address)", ap.Addr(), errBlocked)
	}
	return nil
}

func (o *ProbeOptions) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTools <= 0 {
		o.MaxTools = DefaultMaxTools
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.AllowAddr == nil {
		o.AllowAddr = PublicAddr
	}
	if o.UserAgent == "" {
		o.UserAgent = buildinfo.Read().UserAgent()
	}
}

// Error kinds of an unreachable server.
const (
	KindURL          = "url"            // the candidate is not an http(s) URL
	KindBlocked      = "blocked"        // an address the address policy refuses
	KindTimeout      = "timeout"        // the deadline passed
	KindConnect      = "connect"        // no TCP/TLS connection, or it was reset
	KindHTTPStatus   = "http_status"    // an HTTP error status
	KindRedirect     = "redirect"       // a redirect that is not followed
	KindTooManyBytes = "too_many_bytes" // the byte cap was reached
	KindTooManyTools = "too_many_tools" // the tool cap was reached
	KindTooManyPages = "too_many_pages" // the page cap was reached
	KindCursorLoop   = "cursor_loop"    // a nextCursor seen before
	KindInvalidJSON  = "invalid_json"   // a response that is not JSON
	KindRPCError     = "rpc_error"      // a JSON-RPC error answer
	KindProtocol     = "protocol"       // anything else the protocol forbids
	KindInvalidTools = "invalid_tools"  // tools the census decoder cannot read
)

// Result is what probing one server found.
type Result struct {
	// Reachable says the exchange completed and every tool was kept.
	Reachable bool
	// Transport and ProtocolVersion are those of the completed exchange.
	Transport       string
	ProtocolVersion string
	// ServerInfo is the raw serverInfo of the initialize result.
	ServerInfo json.RawMessage
	// Tools are the tools as the server sent them, one compact JSON object
	// each, in the order of the pages.
	Tools []json.RawMessage
	// ErrorKind and Error describe why an unreachable server is so.
	ErrorKind, Error string
	// Elapsed is the wall time of the probe.
	Elapsed time.Duration
}

// Prober probes servers; it is safe for concurrent use.
type Prober struct {
	opt     ProbeOptions
	base    http.RoundTripper
	ownBase *http.Transport
}

// NewProber returns a Prober with opt's bounds (zero fields take the
// defaults). Close releases its idle connections.
func NewProber(opt ProbeOptions) *Prober {
	opt.defaults()
	p := &Prober{opt: opt, base: opt.Transport}
	if p.base == nil {
		p.ownBase = &http.Transport{
			// No proxy: the address policy needs the real peer.
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: opt.Timeout, KeepAlive: 30 * time.Second, Control: p.opt.dialControl}).DialContext,
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
// legacy HTTP+SSE transport is tried when the URL is an SSE endpoint, or
// when the initialize POST fails with an HTTP 4xx status, as the
// specification's backwards-compatibility section describes. Every failure
// is reported in the Result; ctx's cancellation is reported as a timeout
// only when the probe's own deadline passed.
func (p *Prober) Probe(ctx context.Context, u *url.URL) (r Result) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, p.opt.Timeout)
	defer cancel()
	defer func() {
		// Hostile input must not take the crawl down, even through a
		// bug in the client: the server becomes a record of it.
		if v := recover(); v != nil {
			r = Result{ErrorKind: KindProtocol, Error: fmt.Sprintf("client failure: %v", v), Elapsed: time.Since(start)}
		}
	}()
	if isSSEURL(u) {
		r = p.trySSE(ctx, u)
	} else {
		var initStatus int
		r, initStatus = p.tryStreamable(ctx, u)
		if !r.Reachable && initStatus >= 400 && initStatus < 500 && ctx.Err() == nil {
			sr := p.trySSE(ctx, u)
			if sr.Reachable {
				r = sr
			} else {
				// Both failed: say so, keeping the first answer's kind.
				r.Error = fmt.Sprintf("%s; legacy SSE: %s", r.Error, sr.Error)
			}
		}
	}
	r.Elapsed = time.Since(start)
	return r
}

func (p *Prober) tryStreamable(ctx context.Context, u *url.URL) (Result, int) {
	hs := p.newHTTPState(ctx, u)
	r := p.session(ctx, hs, &mcp.StreamableClientTransport{
		Endpoint: u.String(), HTTPClient: hs.client(), MaxRetries: -1, DisableStandaloneSSE: true,
	}, TransportStreamable)
	return r, int(hs.initStatus.Load())
}

func (p *Prober) trySSE(ctx context.Context, u *url.URL) Result {
	hs := p.newHTTPState(ctx, u)
	return p.session(ctx, hs, &mcp.SSEClientTransport{Endpoint: u.String(), HTTPClient: hs.client()}, TransportSSE)
}

// session runs one MCP session over t and collects the tools.
func (p *Prober) session(ctx context.Context, hs *httpState, t mcp.Transport, transport string) Result {
	r := Result{Transport: transport}
	capt := &capture{hs: hs}
	client := mcp.NewClient(&mcp.Implementation{Name: "atlas-reproduce", Version: buildinfo.Read().Version}, nil)
	cs, err := client.Connect(ctx, &captureTransport{inner: t, capt: capt}, &mcp.ClientSessionOptions{ProtocolVersion: requestedVersion})
	if err != nil {
		return p.fail(ctx, hs, r, KindProtocol, fmt.Errorf("initialize: %w", err))
	}
	defer cs.Close()
	if ir := cs.InitializeResult(); ir != nil {
		r.ProtocolVersion = ir.ProtocolVersion
	}
	r.ServerInfo = capt.serverInfo()

	seen := map[string]bool{}
	cursor := ""
	var line []byte
	for page := 0; ; page++ {
		if page == p.opt.MaxPages {
			return p.fail(ctx, hs, r, KindTooManyPages, fmt.Errorf("more than %d tools/list pages", p.opt.MaxPages))
		}
		if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}); err != nil {
			return p.fail(ctx, hs, r, KindProtocol, fmt.Errorf("tools/list page %d: %w", page+1, err))
		}
		tools, next, kind, err := parsePage(capt.takePage())
		if err != nil {
			return p.fail(ctx, hs, r, kind, fmt.Errorf("tools/list page %d: %w", page+1, err))
		}
		if len(r.Tools)+len(tools) > p.opt.MaxTools {
			return p.fail(ctx, hs, r, KindTooManyTools, fmt.Errorf("more than %d tools", p.opt.MaxTools))
		}
		r.Tools = append(r.Tools, tools...)
		if next == "" {
			break
		}
		if seen[next] {
			return p.fail(ctx, hs, r, KindCursorLoop, fmt.Errorf("tools/list page %d: nextCursor %q was returned before", page+1, next))
		}
		seen[next] = true
		cursor = next
	}
	// The line run will read must be one the census decoder accepts.
	line = AppendToolsRecord(line, "x", r.Tools)
	if _, err := census.NewDecoder().Decode(line); err != nil {
		return p.fail(ctx, hs, r, KindInvalidTools, fmt.Errorf("the census decoder rejects the tools: %w", err))
	}
	r.Reachable = true
	return r
}

// fail turns err into an unreachable Result, with the most telling kind:
// what the HTTP layer saw beats what the SDK made of it.
func (p *Prober) fail(ctx context.Context, hs *httpState, r Result, kind string, err error) Result {
	r.Reachable, r.Tools = false, nil
	// For a deadline or the byte cap, only the stage is kept: the wrapped
	// text depends on which goroutine saw the end first, and the record
	// must not.
	stage, _, _ := strings.Cut(err.Error(), ":")
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		kind, err = KindTimeout, fmt.Errorf("no complete answer within %v (during %s)", p.opt.Timeout, stage)
	case hs.overBytes.Load():
		kind, err = KindTooManyBytes, fmt.Errorf("more than %d response bytes (during %s)", p.opt.MaxBytes, stage)
	case errors.Is(err, errBlocked), strings.Contains(err.Error(), errBlocked.Error()):
		kind = KindBlocked
	case hs.redirect.Load() != nil:
		kind = KindRedirect
		err = fmt.Errorf("%v: %w", *hs.redirect.Load(), err)
	case hs.badStatus.Load() != 0:
		kind = KindHTTPStatus
		err = fmt.Errorf("HTTP %d: %w", hs.badStatus.Load(), err)
	case kind == KindProtocol:
		kind = classifyError(err)
	}
	r.ErrorKind, r.Error = kind, err.Error()
	return r
}

// rejectedCode is the code of the SDK's jsonrpc2.ErrRejected, which wraps
// every transport failure: it is not the server's JSON-RPC error.
const rejectedCode = -32005

// classifyError names the kind of an error the SDK reports. The SDK wraps
// many errors with %v, so the text is all there is to go on.
func classifyError(err error) string {
	var ne net.Error
	var oe *net.OpError
	var we *jsonrpc.Error
	var se *json.SyntaxError
	msg := err.Error()
	switch {
	case errors.As(err, &we) && we.Code != rejectedCode:
		return KindRPCError
	case errors.As(err, &se), strings.Contains(msg, "invalid character"), strings.Contains(msg, "unexpected end of JSON"),
		strings.Contains(msg, "unmarshaling jsonrpc message"), strings.Contains(msg, "failed to decode"):
		return KindInvalidJSON
	case errors.As(err, &oe), errors.As(err, &ne), strings.Contains(msg, "connection reset"),
		strings.Contains(msg, "connection refused"), strings.Contains(msg, "EOF"), strings.Contains(msg, "no such host"):
		return KindConnect
	}
	return KindProtocol
}

// parsePage reads the raw result of one tools/list response. Keys are
// matched exactly and the last duplicate wins, as Python's json reads them.
func parsePage(raw json.RawMessage) (tools []json.RawMessage, next, kind string, err error) {
	if raw == nil {
		return nil, "", KindProtocol, errors.New("no result was captured")
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, "", KindProtocol, fmt.Errorf("result is not an object: %w", err)
	}
	var list []json.RawMessage
	if t, ok := res["tools"]; !ok || bytes.Equal(t, []byte("null")) {
		return nil, "", KindProtocol, errors.New("result has no \"tools\" list")
	} else if err := json.Unmarshal(t, &list); err != nil {
		return nil, "", KindProtocol, errors.New("\"tools\" is not a list")
	}
	if c, ok := res["nextCursor"]; ok && !bytes.Equal(c, []byte("null")) {
		if err := json.Unmarshal(c, &next); err != nil {
			return nil, "", KindProtocol, errors.New("\"nextCursor\" is not a string")
		}
	}
	tools = make([]json.RawMessage, len(list))
	for i, t := range list {
		var b bytes.Buffer
		if err := json.Compact(&b, t); err != nil {
			return nil, "", KindInvalidJSON, err
		}
		tools[i] = bytes.ToValidUTF8(b.Bytes(), []byte("\uFFFD"))
	}
	return tools, next, "", nil
}

// AppendToolsRecord appends the server_tools.jsonl.gz line of a server:
// {"server_id": id, "tools": [tool, ...]} and a newline.
func AppendToolsRecord(b []byte, id string, tools []json.RawMessage) []byte {
	b = append(b, `{"server_id": `...)
	b = appendJSONString(b, id)
	b = append(b, `, "tools": [`...)
	for i, t := range tools {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, t...)
	}
	return append(b, "]}\n"...)
}

func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
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
	info    json.RawMessage
	page    json.RawMessage
}

func (c *capture) serverInfo() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
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
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		c.capt.mu.Lock()
		if c.capt.methods == nil {
			c.capt.methods = map[any]string{}
		}
		c.capt.methods[req.ID.Raw()] = req.Method
		c.capt.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// emptyPage is what the SDK's session sees of every tools/list result.
var emptyPage = json.RawMessage(`{"tools":[]}`)

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok || !resp.ID.IsValid() {
		return msg, err
	}
	c.capt.mu.Lock()
	defer c.capt.mu.Unlock()
	method := c.capt.methods[resp.ID.Raw()]
	delete(c.capt.methods, resp.ID.Raw())
	if resp.Error != nil {
		return msg, err
	}
	switch method {
	case "initialize":
		var res struct {
			ProtocolVersion string          `json:"protocolVersion"`
			ServerInfo      json.RawMessage `json:"serverInfo"`
		}
		if json.Unmarshal(resp.Result, &res) == nil {
			if len(res.ServerInfo) > 0 {
				var b bytes.Buffer
				if json.Compact(&b, res.ServerInfo) == nil {
					c.capt.info = bytes.ToValidUTF8(b.Bytes(), []byte("\uFFFD"))
				}
			}
			// The SDK tells a wrapped connection nothing of the
			// negotiated version, so the HTTP layer adds the header.
			c.capt.hs.setProtocolVersion(res.ProtocolVersion)
		}
	case "tools/list":
		c.capt.page = append(json.RawMessage(nil), resp.Result...)
		resp.Result = emptyPage
	}
	return msg, err
}

// Scan probes the one server at rawURL: the client of the crawl, for the
// scan command. It returns the server_id and what the probe found; only a
// URL that cannot be crawled is an error.
func Scan(ctx context.Context, rawURL string, opt ProbeOptions) (string, Result, error) {
	id, u, err := Normalise(rawURL)
	if err != nil {
		return "", Result{}, err
	}
	p := NewProber(opt)
	defer p.Close()
	return id, p.Probe(ctx, u), nil
}
