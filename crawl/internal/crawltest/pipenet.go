package crawltest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PipeNet is a network of HTTP servers inside one testing/synctest
// bubble: each host serves its handler over net.Pipe connections, so that
// every wait of the crawl and of the servers is on the bubble's clock. A
// deadline passes when every goroutine is blocked, never because the
// machine is busy: what a test of deadlines asserts holds under any load.
type PipeNet struct {
	t     testing.TB
	mu    sync.Mutex
	hosts map[string]*pipeListener
	srvs  []*http.Server
	sdk   []*mcp.Server
	tr    *http.Transport
	stop  chan struct{}
}

// NewPipeNet makes the network; the test's cleanup (inside the bubble)
// closes its servers, their SDK sessions and the client's connections.
func NewPipeNet(t testing.TB) *PipeNet {
	n := &PipeNet{t: t, hosts: map[string]*pipeListener{}, stop: make(chan struct{})}
	n.tr = &http.Transport{DialContext: n.dial, MaxIdleConnsPerHost: 2}
	t.Cleanup(n.close)
	return n
}

// Transport is the client's transport to the network's hosts.
func (n *PipeNet) Transport() *http.Transport { return n.tr }

// Stop is closed when the network closes: a handler that hangs waits on it.
func (n *PipeNet) Stop() <-chan struct{} { return n.stop }

// Serve adds a host serving h and returns its base URL.
func (n *PipeNet) Serve(h http.Handler) string {
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

// SDKServer is an SDK server of tools, closed with the network.
func (n *PipeNet) SDKServer(tools []Tool, pageSize int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1.2.3"}, &mcp.ServerOptions{PageSize: pageSize})
	for _, t := range tools {
		s.AddTool(t.SDKTool(), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	n.mu.Lock()
	n.sdk = append(n.sdk, s)
	n.mu.Unlock()
	return s
}

func (n *PipeNet) Streamable(tools []Tool, pageSize int, jsonResponse bool) string {
	s := n.SDKServer(tools, pageSize)
	return n.Serve(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
}

func (n *PipeNet) SSE(tools []Tool) string {
	s := n.SDKServer(tools, 0)
	return n.Serve(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// Hanging is a host that accepts every request and never answers it.
func (n *PipeNet) Hanging() string { return n.Serve(Hanging(n.stop)) }

func (n *PipeNet) dial(ctx context.Context, _, addr string) (net.Conn, error) {
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

func (n *PipeNet) close() {
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
