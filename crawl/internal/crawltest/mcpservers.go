package crawltest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// Loopback servers for the tests: well-behaved ones built with the SDK's
// server side, and hostile ones written by hand.

// Tool is a tool as a test server defines it.
type Tool struct {
	Name, Description string
	Schema            string // the inputSchema, raw JSON
}

// propertyPool gives the generated tools parameters of every class and of
// none, so that run's class counts are not all zero.
var propertyPool = []struct{ name, desc string }{
	{"api_key", "the API key to authenticate with"},
	{"file_path", "path of the file to read"},
	{"command", "shell command to run"},
	{"amount", "amount to transfer in USD"},
	{"webhook_url", "URL of the endpoint to call"},
	{"query", "what to search for"},
	{"limit", "how many results"},
}

func GenTools(n int, prefix string) []Tool {
	tools := make([]Tool, n)
	for i := range tools {
		a, b := propertyPool[i%len(propertyPool)], propertyPool[(i/len(propertyPool))%len(propertyPool)]
		tools[i] = Tool{
			Name:        fmt.Sprintf("%s_%04d", prefix, i),
			Description: fmt.Sprintf("tool %d of %s", i, prefix),
			Schema: fmt.Sprintf(`{"type":"object","properties":{%q:{"type":"string","description":%q},"%s_2":{"type":"string","description":%q}},"required":[%q]}`,
				a.name, a.desc, b.name, b.desc, a.name),
		}
	}
	return tools
}

// Served is the tool as the server puts it on the wire: the SDK's Tool
// marshalled, which is what the crawl must keep.
func (t Tool) Served(t2 *testing.T) json.RawMessage {
	b, err := json.Marshal(t.SDKTool())
	if err != nil {
		t2.Fatal(err)
	}
	return b
}

func (t Tool) SDKTool() *mcp.Tool {
	return &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.Schema)}
}

func NewSDKServer(tools []Tool, pageSize int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1.2.3"}, &mcp.ServerOptions{PageSize: pageSize})
	Track(s)
	for _, t := range tools {
		s.AddTool(t.SDKTool(), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	return s
}

// sdkServers are the SDK servers the tests made. Closing a test's HTTP
// server leaves the SDK sessions on it open, each with its read loop, until
// a client deletes it, and a probe cut short by its deadline (or one that
// fell back to another transport) deletes none; closeSDKSessions ends them
// before goleak looks, so that it judges the crawl's goroutines, not those
// of the servers the tests stood up.
var sdkServers struct {
	sync.Mutex
	all []*mcp.Server
}

// Main runs a test binary's tests (call it from TestMain and exit with
// its result), then fails them when a goroutine is left behind:
// goleak.VerifyTestMain, with the tracked SDK servers' sessions closed
// first.
func Main(m *testing.M) int {
	code := m.Run()
	closeSDKSessions()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	return code
}

// Track notes s among sdkServers.
func Track(s *mcp.Server) {
	sdkServers.Lock()
	defer sdkServers.Unlock()
	if !slices.Contains(sdkServers.all, s) {
		sdkServers.all = append(sdkServers.all, s)
	}
}

// closeSDKSessions closes the sessions of the tracked SDK servers, which
// would otherwise outlive the tests as goroutines.
func closeSDKSessions() {
	sdkServers.Lock()
	defer sdkServers.Unlock()
	for _, s := range sdkServers.all {
		for ss := range s.Sessions() {
			ss.Close()
		}
	}
}

// Serve starts h on loopback for the test's lifetime.
func Serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// ServeHanging serves h, whose handlers may block until the test ends.
func ServeHanging(t *testing.T, h func(stop <-chan struct{}) http.Handler) *httptest.Server {
	stop := make(chan struct{})
	ts := Serve(t, h(stop))
	t.Cleanup(func() { close(stop) }) // runs before the server's Close
	return ts
}

func StreamableServer(t *testing.T, tools []Tool, pageSize int, jsonResponse bool) *httptest.Server {
	s := NewSDKServer(tools, pageSize)
	return Serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
}

func SSEServer(t *testing.T, tools []Tool) *httptest.Server {
	s := NewSDKServer(tools, 0)
	return Serve(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// RPCHandler answers JSON-RPC POSTs by hand: answer returns the raw result
// of a call (notifications get 202). It is the base of the hostile servers.
func RPCHandler(answer func(w http.ResponseWriter, r *http.Request, method string, params json.RawMessage) (string, bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &msg) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if msg.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		res, ok := answer(w, r, msg.Method, msg.Params)
		if !ok {
			return // answer wrote the response itself
		}
		w.Header().Set("Content-Type", "application/json")
		if text, isErr := strings.CutPrefix(res, "error:"); isErr {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":%q}}`, msg.ID, text)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, res)
	})
}

// InitResult is a hand-written server's answer to initialize.
const InitResult = `{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"hand-written","version":"0"}}`

// Paginating never reaches a last page; with loop it repeats one cursor.
func Paginating(loop bool) http.Handler {
	return RPCHandler(func(_ http.ResponseWriter, _ *http.Request, method string, params json.RawMessage) (string, bool) {
		if method == "initialize" {
			return InitResult, true
		}
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(params, &p)
		next := p.Cursor + "x"
		if loop {
			next = "again"
		}
		return fmt.Sprintf(`{"tools":[{"name":"t%d","inputSchema":{"type":"object"}}],"nextCursor":%q}`, len(p.Cursor), next), true
	})
}

// Hanging accepts the request and never answers, until the test ends.
func Hanging(stop <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})
}

func Status(code int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", code) })
}

// InvalidJSON answers initialize with a body that is not JSON.
func InvalidJSON() http.Handler {
	return RPCHandler(func(w http.ResponseWriter, _ *http.Request, _ string, _ json.RawMessage) (string, bool) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":`)
		return "", false
	})
}

// EndlessStream answers initialize with an SSE stream that never delivers
// the response: keep-alive comments, or with flood, big useless events.
func EndlessStream(flood bool) http.Handler {
	return RPCHandler(func(w http.ResponseWriter, r *http.Request, _ string, _ json.RawMessage) (string, bool) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		filler := ": keep-alive\n\n"
		if flood {
			filler = ":" + strings.Repeat("x", 8<<10) + "\n\n"
		}
		for {
			if _, err := io.WriteString(w, filler); err != nil {
				return "", false
			}
			w.(http.Flusher).Flush()
			pause := time.Millisecond
			if flood {
				pause = 0
			}
			select {
			case <-r.Context().Done():
				return "", false
			case <-time.After(pause):
			}
		}
	})
}

// Redirecting sends every request elsewhere with 307.
func Redirecting(to string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, http.StatusTemporaryRedirect)
	})
}

// Resetting closes the connection without an answer.
func Resetting() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	})
}

func MCPHandler(s *mcp.Server) http.Handler {
	Track(s)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
}

// HTTPTestTLS is an https URL on loopback, the target of a scheme change.
func HTTPTestTLS(t *testing.T) string {
	ts := httptest.NewTLSServer(Status(200))
	t.Cleanup(ts.Close)
	return ts.URL
}

// ClosedURL is a loopback URL where nothing listens.
func ClosedURL(t *testing.T) string {
	ts := httptest.NewServer(Status(200))
	u := ts.URL
	ts.Close()
	return u
}

// Scripted answers each method with a fixed raw result; a result starting
// with "error:" is sent as a JSON-RPC error instead.
func Scripted(results map[string]string) http.Handler {
	return RPCHandler(func(_ http.ResponseWriter, _ *http.Request, method string, _ json.RawMessage) (string, bool) {
		if res, ok := results[method]; ok {
			return res, true
		}
		return "error:method not found", true
	})
}
