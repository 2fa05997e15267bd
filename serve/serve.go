// Package serve runs the classifier as a service beside a gateway: HTTP
// (POST /v1/classify, GET /healthz, GET /metrics) and MCP (/mcp over
// Streamable HTTP, or stdio), all in front of the same labeller the classify
// and run commands use, so a label is the same whichever way it is asked for.
package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"

	"github.com/atlas-reproduce/atlas-reproduce/label"
)

// Defaults of Config. The timeouts bound what a slow or stalled client can
// hold: ReadHeaderTimeout and ReadTimeout close a connection that drips its
// request, WriteTimeout one that will not read its answer, IdleTimeout a
// kept-alive connection that sends nothing more.
const (
	DefaultAddr              = "127.0.0.1:8080"
	DefaultMaxBody           = 8 << 20
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultShutdownTimeout   = 10 * time.Second
)

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	// Addr is the address Run listens on.
	Addr string
	// MaxBody is the largest request body read, in bytes; a larger one is
	// answered 413 without being read further.
	MaxBody int64
	// MaxInFlight bounds the bytes of request bodies being classified at
	// once (default 4 × MaxBody): the decoder's arenas and the answer grow
	// with the body, and many large bodies arriving together must not
	// multiply that without bound. A request that does not fit waits for
	// others to finish; single tools are a few kilobytes and never wait.
	MaxInFlight int64
	// Version names the build in SARIF and in the MCP server's
	// implementation info.
	Version string

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
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.MaxInFlight < c.MaxBody {
		c.MaxInFlight = 4 * c.MaxBody
	}
	if c.Version == "" {
		c.Version = "devel"
	}
	def(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&c.ReadTimeout, DefaultReadTimeout)
	def(&c.WriteTimeout, DefaultWriteTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.ShutdownTimeout, DefaultShutdownTimeout)
	return c
}

// Server is the classifier service. Its handler is safe for concurrent use.
type Server struct {
	cfg       Config
	labellers sync.Pool // *label.Labeller: each holds a decoder's arenas
	bufs      sync.Pool // *[]byte: request bodies and answers
	metrics   *metrics
	inFlight  *semaphore.Weighted // request bytes, see Config.MaxInFlight
	handler   http.Handler
}

// New returns a Server for cfg with its own metrics registry, so that many
// servers can live in one process.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg.withDefaults()}
	s.labellers.New = func() any { return label.NewLabeller() }
	s.bufs.New = func() any { b := make([]byte, 0, 64<<10); return &b }
	s.metrics = newMetrics()
	s.inFlight = semaphore.NewWeighted(s.cfg.MaxInFlight)
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
		MaxHeaderBytes:    64 << 10,
	}
}

// Run listens on the configured address, reports the bound address to
// ready (when not nil; ":0" picks a free port), and serves until ctx is
// cancelled. It then stops accepting, lets in-flight requests finish for up
// to ShutdownTimeout and returns nil; requests still running after that are
// cut off and Run returns an error saying so.
func (s *Server) Run(ctx context.Context, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on a listener it takes over and closes.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.HTTPServer()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-served // http.ErrServerClosed, once Shutdown has closed the listener
	if err != nil {
		hs.Close()
		return fmt.Errorf("shutdown: requests still running after %v were cut off: %w", s.cfg.ShutdownTimeout, err)
	}
	return nil
}

// ServeStdio serves the MCP server over newline-delimited JSON-RPC on r
// and w until r ends or ctx is cancelled; either is a clean stop.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	err := s.newMCPServer().Run(ctx, stdioTransport(r, w))
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

// admit waits until n more request bytes fit under MaxInFlight and returns
// the function that releases them. It is called once a body is read: a
// client still sending holds only what it sent, and those waiting here
// are complete requests, not slow ones.
func (s *Server) admit(ctx context.Context, n int64) (func(), error) {
	n = max(n, 1)
	if err := s.inFlight.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { s.inFlight.Release(n) }, nil
}

// admittedBody reads r's body into a pooled buffer, bounded by --max-body,
// and waits until its bytes are admitted among those in flight. ok is false
// when the request has been answered already: an error, or a client that
// went away while waiting. done releases the admission and the buffer.
func (s *Server) admittedBody(w http.ResponseWriter, r *http.Request) (body []byte, done func(), ok bool) {
	bp := s.bufs.Get().(*[]byte)
	body, status, err := s.readBody(w, r, (*bp)[:0])
	*bp = body
	if err != nil {
		s.putBuf(bp)
		writeError(w, status, apiError{Error: err.Error()})
		return nil, nil, false
	}
	release, err := s.admit(r.Context(), int64(len(body)))
	if err != nil {
		s.putBuf(bp)
		return nil, nil, false
	}
	return body, func() { release(); s.putBuf(bp) }, true
}

// bodyFirst reads an MCP request's body, bounded as /v1/classify's is, and
// admits it before the MCP handler decodes it.
func (s *Server) bodyFirst(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, done, ok := s.admittedBody(w, r)
		if !ok {
			return
		}
		defer done()
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
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
