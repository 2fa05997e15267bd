package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream says where the server behind the proxy is: a URL or a command.
type Upstream struct {
	// URL is an MCP endpoint: Streamable HTTP, or the legacy HTTP+SSE
	// transport when its path ends in /sse (the convention the crawl
	// follows too) or when the initialize POST is refused with a 4xx.
	// Every request goes to the URL's origin: redirects and SSE endpoints
	// elsewhere are refused.
	URL string
	// Command starts a stdio server, one process per session: the program
	// and its arguments.
	Command []string
	// Transport, when set, makes each upstream session's transport: for a
	// program that embeds the proxy (an in-memory server, a custom
	// client). It takes the place of URL and Command.
	Transport func() mcp.Transport
	// Env, when not nil, is the environment of Command (as exec.Cmd.Env).
	Env []string
	// Stderr receives the command's standard error; nil discards it.
	Stderr io.Writer
	// HTTPClient carries the HTTP requests; nil means one with a dial
	// timeout and no overall timeout (streams and calls may last).
	HTTPClient *http.Client
	// MaxMessage bounds one message from the upstream, in bytes.
	MaxMessage int64
}

// Validate says whether u names exactly one upstream that can be used.
func (u Upstream) Validate() error {
	switch {
	case u.Transport != nil:
		return nil
	case u.URL != "" && len(u.Command) > 0:
		return errors.New("give an upstream URL or a command, not both")
	case u.URL == "" && len(u.Command) == 0:
		return errors.New("no upstream: give a URL or a command")
	case u.URL != "":
		p, err := url.Parse(u.URL)
		if err != nil {
			return fmt.Errorf("upstream URL: %w", err)
		}
		if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("upstream URL %q: want an http or https URL", u.URL)
		}
	}
	return nil
}

// isSSE reports whether the URL names a legacy SSE endpoint.
func (u Upstream) isSSE() bool {
	p, err := url.Parse(u.URL)
	return err == nil && strings.HasSuffix(strings.TrimSuffix(p.Path, "/"), "/sse")
}

// defaultHTTPClient bounds connecting, not answering: a tool call or an
// event stream may rightly last long, and the relay ends them when either
// side goes away.
var defaultHTTPClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   10 * time.Second,
	ResponseHeaderTimeout: 0,
	MaxIdleConnsPerHost:   64,
	IdleConnTimeout:       90 * time.Second,
	ForceAttemptHTTP2:     true,
}}

// connect opens a new upstream session's connection. ctx holds what
// outlives the call (a legacy SSE stream).
func (u Upstream) connect(ctx context.Context, lim callLimits) (mcp.Connection, error) {
	client := u.HTTPClient
	if client == nil {
		client = defaultHTTPClient
	}
	if u.URL != "" {
		var err error
		if client, err = sameOriginClient(client, u.URL); err != nil {
			return nil, err
		}
	}
	maxMsg := u.MaxMessage
	if maxMsg <= 0 {
		maxMsg = DefaultMaxMessage
	}
	switch {
	case u.Transport != nil:
		return u.Transport().Connect(ctx)
	case len(u.Command) > 0:
		cmd := exec.Command(u.Command[0], u.Command[1:]...)
		cmd.Env = u.Env
		cmd.Stderr = u.Stderr
		// Closing the connection closes the command's stdin, then signals
		// and kills it if it does not exit. Its lines are bounded as an
		// HTTP upstream's messages are.
		return startCommand(cmd, maxMsg, 2*time.Second)
	case u.isSSE():
		return (&mcp.SSEClientTransport{Endpoint: u.URL, HTTPClient: client, MaxEventSize: int(maxMsg)}).Connect(ctx)
	default:
		sse := func() (mcp.Connection, error) {
			return (&mcp.SSEClientTransport{Endpoint: u.URL, HTTPClient: client, MaxEventSize: int(maxMsg)}).Connect(ctx)
		}
		return &fallbackConn{cur: newStreamConn(u.URL, client, maxMsg, lim), sse: sse}, nil
	}
}

// maxRedirects is how many redirects one upstream request may follow.
const maxRedirects = 5

// sameOriginClient returns a client that sends requests only to the
// upstream URL's origin (scheme, host and port): a redirect elsewhere
// (a 307 would repost the client's message to another host), and a legacy
// SSE server's endpoint event naming another origin (which would get
// every client message), are refused, and https never becomes http. The
// operator named one server; the proxy talks to that one only.
func sameOriginClient(base *http.Client, upstream string) (*http.Client, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	origin := originOf(u)
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c := *base
	c.Transport = originTransport{base: rt, origin: origin}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if o := originOf(req.URL); o != origin {
			return fmt.Errorf("redirect to %s refused: the proxy talks to %s only", o, origin)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		if base.CheckRedirect != nil {
			return base.CheckRedirect(req, via)
		}
		return nil
	}
	return &c, nil
}

// originOf is scheme://host:port with the default port made explicit.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(net.JoinHostPort(u.Hostname(), port))
}

// originTransport refuses requests to any origin but one.
type originTransport struct {
	base   http.RoundTripper
	origin string
}

func (t originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if o := originOf(req.URL); o != t.origin {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("request to %s refused: the proxy talks to %s only", o, t.origin)
	}
	return t.base.RoundTrip(req)
}

// fallbackConn is a Streamable HTTP upstream. On the client's initialize
// it negotiates as the specification says: server/discover first (a
// server that speaks only the stateless revision is bridged to, see
// bridge.go; one that speaks the client's older revision too gets the
// initialize), then the initialize; and it falls back to the legacy HTTP+SSE transport at
// the same URL when its initialize POST is refused
// with a 4xx status (but 401 and 403: credentials would be refused again),
// as the specification's backwards-compatibility section and the crawl
// do, whatever the URL's path.
type fallbackConn struct {
	sse func() (mcp.Connection, error)

	mu    sync.Mutex
	cur   mcp.Connection
	tried bool
}

func (f *fallbackConn) current() mcp.Connection {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur
}

// SessionID implements mcp.Connection.
func (f *fallbackConn) SessionID() string { return f.current().SessionID() }

// Read implements mcp.Connection: a read that fails because the streamable
// connection gave way to the SSE one goes on with the SSE one.
func (f *fallbackConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		c := f.current()
		m, err := c.Read(ctx)
		if err != nil && f.current() != c {
			continue
		}
		return m, err
	}
}

// Write implements mcp.Connection.
func (f *fallbackConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	f.mu.Lock()
	c, first := f.cur, !f.tried
	f.mu.Unlock()
	req, isInit := msg.(*jsonrpc.Request)
	isInit = isInit && req.Method == "initialize" && req.IsCall()
	if !first || !isInit {
		return c.Write(ctx, msg)
	}
	sc := c.(*streamConn)
	// server/discover first, as the specification's version negotiation
	// has it: a server that speaks the stateless revision names the
	// revisions it speaks. The session is opened at the client's own
	// revision where the server speaks it (an initialize, for a client of
	// an older one), and bridged (translated) only where it does not.
	b := sc.discover(req)
	if b != nil && b.legacy && !b.speaksLegacy() {
		// A discover result names the stateless revision alone even
		// where older clients are served too (TypeScript SDK v2's
		// default handler): an initialize at the client's revision,
		// then a ping at the revision it answered, say which.
		if ans := sc.probeLegacy(req); ans != nil {
			f.mu.Lock()
			f.tried = true
			f.mu.Unlock()
			sc.deliver(ans)
			return nil
		}
	}
	if b != nil && (!b.legacy || !b.speaksLegacy()) {
		f.mu.Lock()
		f.tried = true
		f.mu.Unlock()
		sc.useBridge(b)
		return sc.Write(ctx, msg)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	sc.mu.Lock()
	sc.initID = req.ID.Raw()
	// A server whose discover result named the client's revision may
	// still refuse its initialize (-32022): the session is then bridged,
	// as if discover had named the stateless revision alone.
	sc.spare = b
	sc.mu.Unlock()
	err = sc.post(data, req.ID, false)
	var se *statusError
	if errors.As(err, &se) && se.resp != nil && sc.refusedInit(se.resp) {
		f.mu.Lock()
		f.tried = true
		f.mu.Unlock()
		sc.deliver(&jsonrpc.Response{ID: req.ID, Result: b.answer})
		return nil
	}
	if !errors.As(err, &se) || se.code < 400 || se.code > 499 || se.code == http.StatusUnauthorized || se.code == http.StatusForbidden {
		f.mu.Lock()
		f.tried = true
		f.mu.Unlock()
		if se != nil && se.resp != nil {
			sc.deliver(se.resp)
			return nil
		}
		return err
	}
	sseConn, sseErr := f.sse()
	f.mu.Lock()
	f.tried = true
	if sseErr == nil {
		f.cur = sseConn
	}
	f.mu.Unlock()
	if sseErr != nil {
		if se.resp != nil {
			sc.deliver(se.resp) // the streamable server's own answer
			return nil
		}
		return fmt.Errorf("%v; legacy SSE: %w", err, sseErr)
	}
	sc.Close() // its Read gives way to the SSE connection's
	return sseConn.Write(ctx, msg)
}

// relatedTo implements relater.
func (f *fallbackConn) relatedTo(msg jsonrpc.Message) (jsonrpc.ID, bool) {
	if r, ok := f.current().(relater); ok {
		return r.relatedTo(msg)
	}
	return jsonrpc.ID{}, false
}

// Close implements mcp.Connection.
func (f *fallbackConn) Close() error { return f.current().Close() }

// SplitCommand splits a command line as a POSIX shell would split words:
// whitespace separates them, single quotes keep text as it is, double
// quotes keep it but for \" and \\, a backslash outside quotes escapes the
// next character. Nothing is expanded.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("command %q: unterminated single quote", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("command %q: unterminated double quote", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
