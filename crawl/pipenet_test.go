package crawl

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pipeNet is a network of HTTP servers inside one testing/synctest
// bubble: each host serves its handler over net.Pipe connections, so that
// every wait of the crawl and of the servers is on the bubble's clock. A
// deadline passes when every goroutine is blocked, never because the
// machine is busy: what a test of deadlines asserts holds under any load.
type pipeNet struct {
	t     testing.TB
	mu    sync.Mutex
	hosts map[string]*pipeListener
	srvs  []*http.Server
	sdk   []*mcp.Server
	tr    *http.Transport
	stop  chan struct{}
}

// newPipeNet makes the network; the test's cleanup (inside the bubble)
// closes its servers, their SDK sessions and the client's connections.
func newPipeNet(t testing.TB) *pipeNet {
	n := &pipeNet{t: t, hosts: map[string]*pipeListener{}, stop: make(chan struct{})}
	n.tr = &http.Transport{DialContext: n.dial, MaxIdleConnsPerHost: 2}
	t.Cleanup(n.close)
	return n
}

// probe is ProbeOptions for the network's servers: its own transport, with
// timeout as the deadline.
func (n *pipeNet) probe(timeout time.Duration) probe.Options {
	return probe.Options{Timeout: timeout, MaxPages: testProbe.MaxPages, MaxTools: testProbe.MaxTools, MaxBytes: testProbe.MaxBytes, Transport: n.tr}
}

// serve adds a host serving h and returns its base URL.
func (n *pipeNet) serve(h http.Handler) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	host := fmt.Sprintf("srv%d.test:8080", len(n.hosts))
	l := &pipeListener{addr: pipeAddr(host), conns: make(chan net.Conn), done: make(chan struct{})}
	n.hosts[host] = l
	srv := &http.Server{Handler: h}
	n.srvs = append(n.srvs, srv)
	go func() { _ = srv.Serve(l) }()
	return "http://" + host
}

// sdkServer is an SDK server of tools, closed with the network.
func (n *pipeNet) sdkServer(tools []testTool, pageSize int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1.2.3"}, &mcp.ServerOptions{PageSize: pageSize})
	for _, t := range tools {
		s.AddTool(t.sdkTool(), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	n.mu.Lock()
	n.sdk = append(n.sdk, s)
	n.mu.Unlock()
	return s
}

func (n *pipeNet) streamable(tools []testTool, pageSize int, jsonResponse bool) string {
	s := n.sdkServer(tools, pageSize)
	return n.serve(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
}

func (n *pipeNet) sse(tools []testTool) string {
	s := n.sdkServer(tools, 0)
	return n.serve(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// hanging is a host that accepts every request and never answers it.
func (n *pipeNet) hanging() string { return n.serve(hanging(n.stop)) }

func (n *pipeNet) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	n.mu.Lock()
	l := n.hosts[addr]
	n.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	c, s := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
	case <-ctx.Done():
	}
	c.Close()
	s.Close()
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
}

func (n *pipeNet) close() {
	close(n.stop)
	n.tr.CloseIdleConnections()
	for _, srv := range n.srvs {
		srv.Close()
	}
	for _, s := range n.sdk {
		for ss := range s.Sessions() {
			ss.Close()
		}
	}
}

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

// pipeListener hands the server side of each dialled pipe to Serve.
type pipeListener struct {
	addr  pipeAddr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return l.addr }

// newPipeFleet is newFleet on a pipeNet: good servers of varied sizes and
// transports, hangs silent ones, and hostile ones, listed with both
// candidate layouts and a duplicate.
func newPipeFleet(t *testing.T, n *pipeNet, good, hangs int) *fleet {
	fl := &fleet{served: map[string][]testTool{}}
	var lines []string
	add := func(rawURL string, tools []testTool, bare bool) {
		lines = append(lines, fl.add(t, rawURL, tools, bare))
	}
	for i := range good {
		tools := genTools(5+i%11*7, fmt.Sprintf("srv%d", i))
		switch i % 3 {
		case 0:
			add(n.streamable(tools, 10, true)+"/mcp", tools, i%2 == 0)
		case 1:
			add(n.streamable(tools, 0, false), tools, false)
		case 2:
			add(n.sse(tools)+"/sse", tools, true)
		}
		if i < hangs {
			add(n.hanging(), nil, i%2 == 1)
		}
	}
	for range hangs - good {
		add(n.hanging(), nil, false)
	}
	add(n.serve(status(500)), nil, true)
	add(n.serve(paginating(false)), nil, false)
	lines = append(lines, lines[0]) // a duplicate: one server, one record
	lines = append(lines, `{"url": "ftp://example.org/mcp"}`)
	fl.order = append(fl.order, "ftp://example.org/mcp")
	fl.candidates = writeCandidates(t, lines)
	return fl
}
