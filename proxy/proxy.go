// Package proxy is an MCP proxy that puts the gg: parameter risk labels
// where gateways and agents read tools: in each listed tool's _meta, under
// "io.github.atlas-reproduce/param-risk". Every other message passes both
// ways as it came (requests, answers, notifications, the server's own
// requests to the client), relayed as raw JSON-RPC at the SDK's transport
// level, so ids, _meta, unknown fields and error objects survive.
//
// Each downstream session (Streamable HTTP, or stdio) gets its own upstream
// session (Streamable HTTP, legacy SSE, or a stdio command) at the
// client's own revision wherever the upstream speaks it; a request of the
// stateless revision 2026-07-28 is relayed alone (stateless.go), its event
// stream numbered so that a client cut off can resume it (callstream.go),
// and only
// a session whose upstream speaks nothing but that revision is translated,
// through a bridge (bridge.go). Labels
// are those the classify command prints, cached by the tool definition's
// hash. An optional policy hides tools of given classes or refuses their
// calls, failing closed on what it cannot read.
package proxy

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/netutil"
	"golang.org/x/sync/semaphore"

	"github.com/atlas-reproduce/atlas-reproduce/internal/defaults"
	"github.com/atlas-reproduce/atlas-reproduce/internal/httpserve"
)

// Defaults of Config. The HTTP limits are those of the serve command.
const (
	DefaultAddr              = "127.0.0.1:8090"
	DefaultMaxBody           = httpserve.DefaultMaxBody
	DefaultMaxMessage        = 64 << 20
	DefaultCacheSize         = 65536
	DefaultSessionIdle       = 30 * time.Minute
	DefaultReadHeaderTimeout = httpserve.DefaultReadHeaderTimeout
	DefaultReadTimeout       = httpserve.DefaultReadTimeout
	DefaultIdleTimeout       = httpserve.DefaultIdleTimeout
	DefaultShutdownTimeout   = httpserve.DefaultShutdownTimeout
	DefaultOutboxWait        = 10 * time.Second
	DefaultMaxConns          = 256
	DefaultMaxSessions       = 256
	// DefaultMaxCommandSessions is MaxSessions for a command upstream:
	// each session is a process.
	DefaultMaxCommandSessions = 32
	DefaultMaxCalls           = 256
	DefaultMaxSessionCalls    = 32
	// DefaultEventBytes and DefaultEventAge bound the events kept for
	// clients that resume a stream (Config.EventBytes, EventAge).
	DefaultEventBytes = 16 << 20
	DefaultEventAge   = 5 * time.Minute
	// DefaultResumeWait is how long a call of revision 2026-07-28 whose
	// client was cut off is held for the client to resume its stream
	// (Config.ResumeWait).
	DefaultResumeWait = 30 * time.Second
)

// Config configures a Proxy. Zero fields take the defaults above.
type Config struct {
	// Upstream is the server behind the proxy.
	Upstream Upstream
	// Policy acts on the labels; the zero Policy only publishes them.
	Policy Policy
	// Addr is the address Run listens on.
	Addr string
	// MaxBody is the largest request body the HTTP downstream reads.
	MaxBody int64
	// MaxInFlight bounds the bytes of request bodies held at once (default
	// 4 × MaxBody): a body takes its room before it is read, and one that
	// finds none within ReadTimeout is answered 503.
	MaxInFlight int64
	// MaxConns bounds the open downstream connections; more wait to be
	// accepted.
	MaxConns int
	// MaxSessions bounds the HTTP sessions (each holds an upstream session,
	// a process with Upstream.Command: DefaultMaxCommandSessions then); an
	// initialize beyond it is answered 503.
	MaxSessions int
	// MaxCalls and MaxSessionCalls bound the calls in flight to a
	// Streamable HTTP upstream, over all sessions and in one: a batch of
	// thousands of calls waits its turn rather than opening thousands of
	// connections.
	MaxCalls        int
	MaxSessionCalls int
	// EventBytes and EventAge bound the events the HTTP downstream keeps
	// so that a client cut off mid-stream can resume it with
	// Last-Event-ID: the bytes held over every session, and how long an
	// event is held. An event dropped before the client came back makes
	// its resumption fail (the client starts the request again).
	EventBytes int
	EventAge   time.Duration
	// ResumeWait is how long a call of revision 2026-07-28 (which has no
	// session) goes on upstream once its client's event stream was cut,
	// for the client to resume the stream with Last-Event-ID; a call no
	// client came back for is then cancelled, as a direct connection's
	// cut would have cancelled it at once.
	ResumeWait time.Duration
	// CacheSize is how many tool definitions' labels are kept.
	CacheSize int
	// SessionIdle ends an HTTP session no request has touched for this
	// long (a client that went away without DELETE), and its upstream.
	SessionIdle time.Duration
	// The http.Server timeouts. There is no write timeout: a tool call or
	// an event stream may rightly last long, and ends when either side
	// goes away.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	// OutboxWait bounds how long a server's request (sampling, roots/list,
	// elicitation) waits for an HTTP client to open the standalone stream
	// it must arrive on; then the server is answered with an error.
	OutboxWait time.Duration
	// ShutdownTimeout bounds how long Run waits for requests in flight
	// once its context is cancelled.
	ShutdownTimeout time.Duration
	// Logger receives the policy's decisions and upstream failures; nil
	// discards them.
	Logger *slog.Logger
	// Reclaim, when not nil, is called, and must not wait, after a
	// message of several megabytes has been relayed, so that the command
	// can give freed memory back to the operating system (the proxy
	// command passes an internal/reclaim Reclaimer's Request). Nil leaves
	// freed memory to the Go runtime.
	Reclaim func()
}

func (c Config) withDefaults() Config {
	defaults.Set(&c.Addr, DefaultAddr)
	defaults.Set(&c.MaxBody, DefaultMaxBody)
	c.MaxInFlight = httpserve.MaxInFlight(c.MaxInFlight, c.MaxBody+1)
	defaults.Set(&c.MaxConns, DefaultMaxConns)
	if len(c.Upstream.Command) > 0 {
		defaults.Set(&c.MaxSessions, DefaultMaxCommandSessions)
	}
	defaults.Set(&c.MaxSessions, DefaultMaxSessions)
	defaults.Set(&c.MaxCalls, DefaultMaxCalls)
	defaults.Set(&c.MaxSessionCalls, DefaultMaxSessionCalls)
	defaults.Set(&c.CacheSize, DefaultCacheSize)
	defaults.Set(&c.EventBytes, DefaultEventBytes)
	defaults.Set(&c.EventAge, DefaultEventAge)
	defaults.Set(&c.ResumeWait, DefaultResumeWait)
	defaults.Set(&c.SessionIdle, DefaultSessionIdle)
	defaults.Set(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	defaults.Set(&c.ReadTimeout, DefaultReadTimeout)
	defaults.Set(&c.IdleTimeout, DefaultIdleTimeout)
	defaults.Set(&c.ShutdownTimeout, DefaultShutdownTimeout)
	defaults.Set(&c.OutboxWait, DefaultOutboxWait)
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// Proxy relays MCP sessions to the upstream, labelling tools/list results.
// It is safe for concurrent use.
type Proxy struct {
	cfg      Config
	log      *slog.Logger
	labels   *labeller
	metrics  *metrics
	sessions *sessionTable
	handler  http.Handler
	inFlight *semaphore.Weighted // request body bytes, see Config.MaxInFlight
	calls    *semaphore.Weighted // upstream calls, see Config.MaxCalls
	events   *eventStore         // see Config.EventBytes
	streams  *callStreams        // the streams of calls without a session
	// statelessClient carries stateless requests (see stateless.go) to a
	// Streamable HTTP upstream; nil for other upstreams.
	statelessClient *http.Client
	// link carries stateless requests to any other upstream (see
	// statelesslink.go).
	link *statelessLink
}

// New returns a Proxy for cfg, or an error naming what is wrong with it.
func New(cfg Config) (*Proxy, error) {
	cfg = cfg.withDefaults()
	err := cfg.Upstream.Validate()
	if err != nil {
		return nil, err
	}
	// The policy is copied, never written into: the caller's slices stay
	// as they were given, and a later change to them does not reach the
	// proxy.
	normalised := func(set []string) ([]string, error) {
		out := make([]string, 0, len(set))
		for _, c := range set {
			id, err := NormaliseClass(c)
			if err != nil {
				return nil, err
			}
			out = append(out, id)
		}
		return out, nil
	}
	if cfg.Policy.Hide, err = normalised(cfg.Policy.Hide); err != nil {
		return nil, err
	}
	if cfg.Policy.Deny, err = normalised(cfg.Policy.Deny); err != nil {
		return nil, err
	}
	cfg.Policy.AllowTools = slices.Clone(cfg.Policy.AllowTools)
	p := &Proxy{cfg: cfg, log: cfg.Logger, labels: newLabeller(cfg.CacheSize), metrics: newMetrics(),
		inFlight: semaphore.NewWeighted(cfg.MaxInFlight), calls: semaphore.NewWeighted(int64(cfg.MaxCalls))}
	p.events = newEventStore(cfg.EventBytes, cfg.EventAge)
	p.streams = newCallStreams(p.events, cfg.ResumeWait, p.metrics)
	p.sessions = newSessionTable(p)
	p.link = newStatelessLink(p)
	if u := cfg.Upstream; u.URL != "" && u.Transport == nil && !u.isSSE() {
		base := u.HTTPClient
		if base == nil {
			base = defaultHTTPClient
		}
		if p.statelessClient, err = sameOriginClient(base, u.URL); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", httpserve.GuardMCP(http.HandlerFunc(p.serveMCP)))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.Handle("/metrics", p.metrics.handler())
	p.handler = mux
	return p, nil
}

// Handler returns the HTTP handler: /mcp, /healthz and /metrics.
func (p *Proxy) Handler() http.Handler { return p.handler }

// Registry returns the proxy's metrics registry.
func (p *Proxy) Registry() *prometheus.Registry { return p.metrics.reg }

// Run listens on the configured address, reports the bound address to
// ready (when not nil), and serves until ctx is cancelled.
func (p *Proxy) Run(ctx context.Context, ready func(net.Addr)) error {
	return httpserve.Run(ctx, p.cfg.Addr, ready, p.Serve)
}

// Serve is Run on a listener it takes over and closes. On cancellation it
// stops accepting, ends every session (and so its upstream), and lets
// requests finish for up to ShutdownTimeout.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           p.handler,
		ReadHeaderTimeout: p.cfg.ReadHeaderTimeout,
		ReadTimeout:       p.cfg.ReadTimeout,
		IdleTimeout:       p.cfg.IdleTimeout,
		MaxHeaderBytes:    httpserve.MaxHeaderBytes,
	}
	janitorCtx, stopJanitor := context.WithCancel(ctx)
	janitorDone := make(chan struct{})
	go func() {
		defer close(janitorDone)
		p.sessions.janitor(janitorCtx)
	}()
	defer func() {
		stopJanitor()
		<-janitorDone
	}()
	// Sessions first: their event streams would hold Shutdown open.
	return httpserve.Serve(ctx, hs, netutil.LimitListener(ln, p.cfg.MaxConns), p.cfg.ShutdownTimeout, p.sessions.closeAll)
}

// ServeStdio relays one session whose client speaks newline-delimited
// JSON-RPC on r and w (the proxy launched as a client's subprocess), until
// r ends or ctx is cancelled; either is a clean stop. An upstream failure
// (or a failure reading r) is returned after the client has been answered
// with it.
//
// ServeStdio owns r and w: it closes each that is an io.Closer when the
// session ends, which is how a Read blocked on a client that sent nothing
// is ended. It returns only once its reading goroutine has returned, so a
// reader that is no io.Closer keeps it until its Read returns.
func (p *Proxy) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	if f, ok := r.(*os.File); ok {
		r = interruptible(f)
	}
	rc, ok := r.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(r)
	}
	wc, ok := w.(io.WriteCloser)
	if !ok {
		wc = nopWriteCloser{w}
	}
	// A line is bounded as an upstream's message is; a line that is not
	// JSON-RPC is answered with a parse error and the session goes on.
	down := newLineConn(rc, wc, p.maxMessage(), true, nil)
	return p.relay(ctx, down, nil, nil, nil)
}

func (p *Proxy) maxMessage() int64 {
	if p.cfg.Upstream.MaxMessage > 0 {
		return p.cfg.Upstream.MaxMessage
	}
	return DefaultMaxMessage
}

// interruptible returns a file reading what f reads whose Read a Close
// ends. A file in blocking mode (a process's stdin is, as a rule) is not
// read through the runtime's poller, so closing it leaves a Read blocked
// until data or the end comes: the session could never end before its
// client. The descriptor is duplicated and the duplicate made
// non-blocking, which the poller takes; the file description's
// non-blocking flag is shared with f, which ServeStdio owns and closes
// too. When that fails f is returned as it is.
func interruptible(f *os.File) io.ReadCloser {
	sc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	dup := -1
	sc.Control(func(fd uintptr) {
		if d, err := syscall.Dup(int(fd)); err == nil {
			if syscall.SetNonblock(d, true) == nil {
				dup = d
			} else {
				syscall.Close(d)
			}
		}
	})
	if dup < 0 {
		return f
	}
	nf := os.NewFile(uintptr(dup), f.Name())
	return struct {
		io.Reader
		io.Closer
	}{nf, closeBoth{nf, f}}
}

// closeBoth closes two closers, returning the first's error.
type closeBoth struct{ a, b io.Closer }

func (c closeBoth) Close() error {
	err := c.a.Close()
	c.b.Close()
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
