//lint:file-ignore SA1019 roots and sampling are deprecated in the newest protocol revision, but a proxy must still relay them for the others.

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// stdioServerEnv makes the test binary an SDK MCP server on stdio: the
// stdio upstream of the tests, with no program beside the test to build.
const stdioServerEnv = "ATLAS_PROXY_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "dupe" {
		dupeAnswerServer(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	if os.Getenv(stdioServerEnv) == "proxy" {
		// The proxy itself over stdio, in front of the URL given: what a
		// client that launches its servers starts.
		os.Exit(stdioProxy(os.Getenv(stdioUpstreamEnv)))
	}
	if os.Getenv(stdioServerEnv) == "hang" {
		hangServer(os.Stdin, os.Stderr)
		os.Exit(0)
	}
	if os.Getenv(stdioServerEnv) == "big" {
		bigListServer(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	if os.Getenv(stdioServerEnv) == "1" {
		err := upstreamServer(nil, nil).Run(context.Background(), &mcp.StdioTransport{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Every goroutine a test starts (relays, upstream readers, janitors,
	// processes' waiters) must have ended with it.
	goleak.VerifyTestMain(m)
}

// The upstream's tools, with raw schemas (and one _meta of its own) so
// that what the proxy must keep is known.
var (
	readFileSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"path of the file to read"}},"required":["path"]}`)
	runSchema      = json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"shell command"}}}`)
	echoSchema     = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	emptySchema    = json.RawMessage(`{"type":"object"}`)
)

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// upstreamServer is the SDK server behind the proxy. Its tools: echo,
// read_file, run, ask (asks the client for its roots and for a sampled
// message: the server-to-client requests), wait (holds the call until
// release is closed or the call ends; started is sent on first, when not
// nil, and again when the call is cancelled), progress (notifies progress
// when asked to), die (the process exits mid-call).
func upstreamServer(started, release chan struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "echo the text", InputSchema: echoSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			json.Unmarshal(req.Params.Arguments, &a)
			r := textResult(a.Text)
			r.Meta = mcp.Meta{"vendor/echo": "kept"}
			return r, nil
		})
	srv.AddTool(&mcp.Tool{Name: "read_file", Description: "Read a file", InputSchema: readFileSchema,
		Meta: mcp.Meta{"vendor/origin": "test"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("contents"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "run", Description: "run a command", InputSchema: runSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("ran"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "ask", Description: "ask the client", InputSchema: emptySchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			roots, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, fmt.Errorf("roots/list: %w", err)
			}
			msg, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}})
			if err != nil {
				return nil, fmt.Errorf("sampling: %w", err)
			}
			var names []string
			for _, r := range roots.Roots {
				names = append(names, r.URI)
			}
			return textResult(strings.Join(names, ",") + "|" + msg.Content.(*mcp.TextContent).Text), nil
		})
	srv.AddTool(&mcp.Tool{Name: "wait", Description: "wait for the test", InputSchema: emptySchema},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if started != nil {
				started <- struct{}{}
			}
			select {
			case <-release:
			case <-ctx.Done():
				if started != nil { // the call was cancelled: say so
					select {
					case started <- struct{}{}:
					default:
					}
				}
			}
			return textResult("released"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "progress", Description: "report progress", InputSchema: emptySchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half"})
				if err != nil {
					return nil, err
				}
			}
			return textResult("done"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "die", Description: "exit the process", InputSchema: emptySchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	return srv
}

// recorder keeps the raw results a client received, by method.
type recorder struct {
	mu      sync.Mutex
	methods map[any]string
	results map[string][]json.RawMessage
	errors  map[string][]*jsonrpc.Error
}

type recordingTransport struct {
	inner mcp.Transport
	rec   *recorder
}

func record(t mcp.Transport) (*recordingTransport, *recorder) {
	r := &recorder{methods: map[any]string{}, results: map[string][]json.RawMessage{}, errors: map[string][]*jsonrpc.Error{}}
	return &recordingTransport{inner: t, rec: r}, r
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, rec: t.rec}, nil
}

type recordingConn struct {
	mcp.Connection
	rec *recorder
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.rec.mu.Lock()
		c.rec.methods[req.ID.Raw()] = req.Method
		c.rec.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.rec.mu.Lock()
		m := c.rec.methods[resp.ID.Raw()]
		if resp.Error != nil {
			if we, ok := resp.Error.(*jsonrpc.Error); ok {
				c.rec.errors[m] = append(c.rec.errors[m], we)
			}
		} else {
			c.rec.results[m] = append(c.rec.results[m], append(json.RawMessage(nil), resp.Result...))
		}
		c.rec.mu.Unlock()
	}
	return msg, err
}

func (r *recorder) last(method string) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	rs := r.results[method]
	if len(rs) == 0 {
		return nil
	}
	return rs[len(rs)-1]
}

func (r *recorder) lastError(method string) *jsonrpc.Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	es := r.errors[method]
	if len(es) == 0 {
		return nil
	}
	return es[len(es)-1]
}

// newProxy returns a proxy for up with the policy pol.
func newProxy(t *testing.T, up Upstream, pol Policy) *Proxy {
	t.Helper()
	p, err := New(Config{Upstream: up, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serveHTTP serves p's handler on loopback; the client reaches /mcp.
func serveHTTP(t testing.TB, p *Proxy) string {
	t.Helper()
	ts := httptest.NewServer(p.Handler())
	t.Cleanup(func() {
		p.sessions.closeAll()
		ts.Close()
	})
	return ts.URL
}

// stdioClient runs p.ServeStdio over pipes and returns the client's end.
func stdioClient(t testing.TB, p *Proxy) mcp.Transport {
	t.Helper()
	cr, pw := io.Pipe() // proxy writes, client reads
	pr, cw := io.Pipe() // client writes, proxy reads
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.ServeStdio(context.Background(), pr, pw)
		pw.Close()
	}()
	t.Cleanup(func() {
		cw.Close()
		<-done
	})
	return &mcp.IOTransport{Reader: cr, Writer: cw}
}

// sdkUpstreamHTTP serves srv over Streamable HTTP on loopback.
func sdkUpstreamHTTP(t testing.TB, srv *mcp.Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts
}

// sdkUpstreamSSE serves srv over the legacy HTTP+SSE transport.
func sdkUpstreamSSE(t testing.TB, srv *mcp.Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts
}

// stdioUpstream is the test binary re-run as the stdio server.
func stdioUpstream(t *testing.T) Upstream {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Upstream{Command: []string{exe, "-test.run=^$"}, Env: append(os.Environ(), stdioServerEnv+"=1")}
}

// toolsOf splits a tools/list result into its raw tools.
func toolsOf(t *testing.T, result json.RawMessage) []json.RawMessage {
	t.Helper()
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		t.Fatalf("tools/list result %s: %v", result, err)
	}
	return res.Tools
}

// labelsOf returns the param-risk object of a listed tool, or nil.
func labelsOf(t *testing.T, tool json.RawMessage) *metaLabels {
	t.Helper()
	var v struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(tool, &v); err != nil {
		t.Fatal(err)
	}
	raw, ok := v.Meta[MetaKey]
	if !ok {
		return nil
	}
	var m metaLabels
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("labels %s: %v", raw, err)
	}
	m.raw = raw
	return &m
}

// metaLabels is the documented shape of the _meta member.
type metaLabels struct {
	Classes         []string `json:"classes"`
	RequiredClasses []string `json:"required_classes"`
	Properties      []struct {
		Name     string   `json:"name"`
		Where    string   `json:"where"`
		Required bool     `json:"required"`
		Classes  []string `json:"classes"`
	} `json:"properties"`
	Rules string `json:"rules"`
	raw   json.RawMessage
}
