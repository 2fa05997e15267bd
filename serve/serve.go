// Package serve runs the classifier as a service beside a gateway: HTTP
// (POST /v1/classify, GET /healthz, GET /metrics) and MCP (/mcp over
// Streamable HTTP, or stdio), all in front of the same labeller the classify
// and run commands use, so a label is the same whichever way it is asked for.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/netutil"
	"golang.org/x/sync/semaphore"

	"github.com/atlas-reproduce/atlas-reproduce/internal/defaults"
	"github.com/atlas-reproduce/atlas-reproduce/internal/httpserve"
	"github.com/atlas-reproduce/atlas-reproduce/label"
)

// Defaults of Config. The timeouts bound what a slow or stalled client can
// hold: ReadHeaderTimeout and ReadTimeout close a connection that drips its
// request, WriteTimeout one that will not read its answer, IdleTimeout a
// kept-alive connection that sends nothing more.
const (
	DefaultAddr              = "127.0.0.1:8080"
	DefaultMaxBody           = httpserve.DefaultMaxBody
	DefaultMaxTools          = 50_000
	DefaultMaxConns          = 256
	DefaultLingerBytes       = 64 << 20
	DefaultLingerTimeout     = 10 * time.Second
	DefaultReadHeaderTimeout = httpserve.DefaultReadHeaderTimeout
	DefaultReadTimeout       = httpserve.DefaultReadTimeout
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = httpserve.DefaultIdleTimeout
	DefaultShutdownTimeout   = httpserve.DefaultShutdownTimeout
)

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	// Addr is the address Run listens on.
	Addr string
	// MaxBody is the largest request body read, in bytes; a larger one is
	// answered 413 without being read further.
	MaxBody int64
	// MaxInFlight bounds the bytes of request bodies held at once (default
	// 4 × MaxBody), counted as they are read: a body takes its share
	// before each of its bytes arrives, so many clients each sending most
	// of a large body cannot hold more than this between them. A request
	// that finds no room waits for others to finish, up to ReadTimeout,
	// and is then answered 503.
	MaxInFlight int64
	// MaxTools is the most tools one request may hold (the /v1/classify
	// body, or the arguments of one MCP call); more are refused with 413.
	// With the answer streamed, it is what bounds the work and the labels
	// a small body of many empty tools asks for.
	MaxTools int
	// MaxConns bounds the open connections; more wait to be accepted.
	MaxConns int
	// LingerBytes and LingerTimeout bound what is read and discarded of a
	// request body after the server has answered without reading it all
	// (413, say). A client that sends its whole body before reading the
	// answer (Python's urllib and requests do) would otherwise see the
	// connection reset, not the answer; nginx's lingering close does the
	// same.
	LingerBytes   int64
	LingerTimeout time.Duration
	// OnDrain, when not nil, is called once Serve has stopped accepting
	// connections after its context was cancelled, while the requests in
	// flight finish.
	OnDrain func()
	// Logger receives the server's notices (draining, the http.Server's
	// errors); nil discards them.
	Logger *slog.Logger
	// Reclaim, when not nil, is called, and must not wait, each time the
	// last request in flight holding a body of 1 MiB or more ends: the
	// moment to give memory back to the operating system (the command
	// passes an internal/reclaim Reclaimer's Request). Nil leaves freed
	// memory to the runtime.
	Reclaim func()

	// The http.Server timeouts (see the defaults above for what each
	// bounds).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// ShutdownTimeout bounds how long in-flight requests may take to finish
	// once Run's context is cancelled.
	ShutdownTimeout time.Duration
}

func (c Config) withDefaults() Config {
	defaults.Set(&c.Addr, DefaultAddr)
	defaults.Set(&c.MaxBody, DefaultMaxBody)
	c.MaxInFlight = httpserve.MaxInFlight(c.MaxInFlight, c.MaxBody)
	defaults.Set(&c.MaxTools, DefaultMaxTools)
	defaults.Set(&c.MaxConns, DefaultMaxConns)
	defaults.Set(&c.LingerBytes, DefaultLingerBytes)
	defaults.Set(&c.LingerTimeout, DefaultLingerTimeout)
	defaults.Set(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	defaults.Set(&c.ReadTimeout, DefaultReadTimeout)
	defaults.Set(&c.WriteTimeout, DefaultWriteTimeout)
	defaults.Set(&c.IdleTimeout, DefaultIdleTimeout)
	defaults.Set(&c.ShutdownTimeout, DefaultShutdownTimeout)
	c.Logger = defaults.Logger(c.Logger)
	return c
}

// Server is the classifier service. Its handler is safe for concurrent use.
type Server struct {
	cfg       Config
	labellers sync.Pool // *label.Labeller: each holds a decoder's arenas
	bufs      sync.Pool // *[]byte: request bodies and answers
	metrics   *metrics
	inFlight  *semaphore.Weighted // request bytes, see Config.MaxInFlight
	// labelling bounds the bytes of bodies being labelled at once to
	// MaxBody: labelling takes memory in proportion to the body (the
	// decoder's properties and the labels of the tool at hand), up to
	// some tens of times it for a tool of nothing but empty properties,
	// and the CPU it needs is the same whether bodies take turns or not.
	labelling *semaphore.Weighted
	handler   http.Handler

	// large counts the requests in flight holding a body of reclaimAbove
	// bytes or more; when it falls to zero, Config.Reclaim is called.
	large atomic.Int64

	// testHookWaiting, when set, is called when a request starts waiting
	// for room among the bytes in flight; testHookConnState, on each
	// connection state change.
	testHookWaiting   func()
	testHookConnState func(net.Conn, http.ConnState)
}

// New returns a Server for cfg with its own metrics registry, so that many
// servers can live in one process.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg.withDefaults()}
	s.labellers.New = func() any { return label.NewLabeller() }
	s.bufs.New = func() any { b := make([]byte, 0, bodyStep); return &b }
	s.metrics = newMetrics()
	s.inFlight = semaphore.NewWeighted(s.cfg.MaxInFlight)
	s.labelling = semaphore.NewWeighted(s.cfg.MaxBody)
	mux := http.NewServeMux()
	mux.Handle("/v1/classify", s.route("/v1/classify", onlyMethod(http.MethodPost, http.HandlerFunc(s.classify))))
	mux.Handle("/mcp", s.route("/mcp", onlyMethod(http.MethodPost, s.bodyFirst(s.mcpHandler()))))
	mux.Handle("/healthz", s.route("/healthz", onlyMethod(http.MethodGet, http.HandlerFunc(healthz))))
	mux.Handle("/metrics", s.route("/metrics", onlyMethod(http.MethodGet, s.metrics.handler())))
	mux.Handle("/", s.route("other", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, apiError{Error: "no such endpoint: " + r.URL.Path})
	})))
	s.handler = mux
	return s
}

// Handler returns the HTTP handler of every endpoint.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry returns the server's metrics registry.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }

// HTTPServer returns an http.Server for the handler with the configured
// timeouts.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    httpserve.MaxHeaderBytes,
		ConnState:         s.testHookConnState,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
	}
}

// Run listens on the configured address, reports the bound address to
// ready (when not nil; ":0" picks a free port), and serves until ctx is
// cancelled. It then stops accepting, lets in-flight requests finish for up
// to ShutdownTimeout and returns nil; requests still running after that are
// cut off and Run returns an error saying so.
func (s *Server) Run(ctx context.Context, ready func(net.Addr)) error {
	return httpserve.Run(ctx, s.cfg.Addr, ready, s.Serve)
}

// Serve is Run on a listener it takes over and closes. At most MaxConns
// of its connections are open at once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ln = netutil.LimitListener(ln, s.cfg.MaxConns)
	hs := s.HTTPServer()
	// net/http runs these once its listeners are closed.
	hs.RegisterOnShutdown(func() {
		s.cfg.Logger.Info("serve: stopped accepting connections; finishing the requests in flight")
	})
	if s.cfg.OnDrain != nil {
		hs.RegisterOnShutdown(s.cfg.OnDrain)
	}
	return httpserve.Serve(ctx, hs, ln, s.cfg.ShutdownTimeout, nil)
}

// ServeStdio serves the MCP server over newline-delimited JSON-RPC on r
// and w until r ends or ctx is cancelled; either is a clean stop.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	t, stop := s.stdioTransport(r, w)
	defer context.AfterFunc(ctx, stop)()
	err := s.newMCPServer().Run(ctx, t)
	stop()
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

// reclaimAbove is the body size from which a request's end may give
// memory back to the operating system.
const reclaimAbove = 1 << 20

// largeDone notes the end of a request that held a large body.
func (s *Server) largeDone() {
	if s.large.Add(-1) == 0 && s.cfg.Reclaim != nil {
		s.cfg.Reclaim()
	}
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
}

// onlyMethod answers any other method 405 with the Allow header.
func onlyMethod(method string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, apiError{Error: fmt.Sprintf("method %s not allowed; use %s", r.Method, method)})
			return
		}
		h.ServeHTTP(w, r)
	})
}
