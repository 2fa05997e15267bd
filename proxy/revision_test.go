//lint:file-ignore SA1019 roots and sampling are deprecated in the newest protocol revision, but a proxy must still relay them for the others.

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireRecorder records the JSON-RPC exchange of an HTTP client as it is on
// the wire: requests' methods, and the raw results of answers, whether in
// a JSON body or an event stream.
type wireRecorder struct{ rec *recorder }

func (w wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if m, err := jsonrpc.DecodeMessage(body); err == nil {
			if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
				w.rec.mu.Lock()
				w.rec.methods[r.ID.Raw()] = r.Method
				w.rec.mu.Unlock()
			}
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	body := resp.Body
	go func() {
		// Every line is read as it comes (an event stream stays open),
		// and recorded before the client reads it: a JSON body is one
		// line, an event's data a "data: " line.
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			line := bytes.TrimPrefix(sc.Bytes(), []byte("data: "))
			m, err := jsonrpc.DecodeMessage(line)
			if r, ok := m.(*jsonrpc.Response); err == nil && ok {
				w.rec.mu.Lock()
				method := w.rec.methods[r.ID.Raw()]
				if r.Error == nil {
					w.rec.results[method] = append(w.rec.results[method], append(json.RawMessage(nil), r.Result...))
				}
				w.rec.mu.Unlock()
			}
			if _, err := pw.Write(append(sc.Bytes(), '\n')); err != nil {
				break
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	resp.Body = struct {
		io.Reader
		io.Closer
	}{pr, closeBoth{pr, body}}
	return resp, nil
}

// dualUpstream is a server that speaks both generations at one URL, as
// mcp-go's Streamable HTTP server and TypeScript SDK v2's default handler
// do: a request of revision 2026-07-28 (server/discover included) is served
// statelessly by the Go SDK v1.8's stateless handler, anything else by its
// session handler, with server-initiated requests.
func dualUpstream(t *testing.T, srv *mcp.Server) string {
	stateful := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	return newLoopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= statelessVersion {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	}))
}

// samplingClient is a client of revision v that answers sampling,
// recording the raw results it receives. An HTTP client is recorded on
// the wire (a wrapped connection would hide from the SDK the moment it
// opens its standalone stream).
func samplingClient(t *testing.T, tr mcp.Transport, v string) (*mcp.ClientSession, *recorder) {
	var rtr mcp.Transport
	var rec *recorder
	if st, ok := tr.(*mcp.StreamableClientTransport); ok {
		rec = &recorder{methods: map[any]string{}, results: map[string][]json.RawMessage{}, errors: map[string][]*jsonrpc.Error{}}
		st.HTTPClient = &http.Client{Transport: wireRecorder{rec}}
		rtr = st
	} else {
		rtr, rec = record(tr)
	}
	opts := &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			in := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled " + in}}, nil
		},
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
	}
	cs := connectVersion(t, rtr, opts, v)
	return cs, rec
}

// stateless2026Fields are the members and _meta keys revision 2026-07-28
// added to results; none may reach a client of an older revision.
var stateless2026Fields = []string{`"resultType"`, `"ttlMs"`, `"cacheScope"`, `"io.modelcontextprotocol/serverInfo"`}

// TestClientRevision: a client of 2025-11-25 reaches a server that speaks
// both generations through the proxy in a 2025 session of its own: the
// server's sampling request reaches it and its answer the server (a
// bridged session has no channel for them), no 2026 member reaches it,
// and every answer is byte for byte the one a direct connection gets,
// over either downstream. No session is translated.
func TestClientRevision(t *testing.T) {
	srv := upstreamServer(nil, nil)
	up := dualUpstream(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	call := func(cs *mcp.ClientSession, name string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	direct, drec := samplingClient(t, &mcp.StreamableClientTransport{Endpoint: up}, "2025-11-25")
	call(direct, "echo")
	call(direct, "ask")
	for _, down := range []string{"http", "stdio"} {
		t.Run(down, func(t *testing.T) {
			p := newProxy(t, Upstream{URL: up}, Policy{})
			var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
			if down == "stdio" {
				tr = stdioClient(t, p)
			}
			cs, rec := samplingClient(t, tr, "2025-11-25")
			if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
				t.Errorf("negotiated %q", v)
			}
			call(cs, "echo")
			call(cs, "ask")
			rec.mu.Lock()
			results := rec.results["tools/call"]
			rec.mu.Unlock()
			drec.mu.Lock()
			want := drec.results["tools/call"]
			drec.mu.Unlock()
			if len(results) != 2 {
				t.Fatalf("%d results", len(results))
			}
			for i := range results {
				if !bytes.Equal(results[i], want[i]) {
					t.Errorf("through the proxy:\n%s\ndirect:\n%s", results[i], want[i])
				}
				for _, f := range stateless2026Fields {
					if bytes.Contains(results[i], []byte(f)) {
						t.Errorf("a 2025 session got %s: %s", f, results[i])
					}
				}
			}
			var ask mcp.CallToolResult
			if err := json.Unmarshal(results[1], &ask); err != nil || len(ask.Content) == 0 {
				t.Fatalf("ask: %v %s", err, results[1])
			}
			if got := ask.Content[0].(*mcp.TextContent).Text; got != "|sampled hello" && got != "file:///root-a|sampled hello" {
				t.Errorf("ask = %q: the sampling round trip did not happen", got)
			}
			if n := testCounter(t, p, "atlas_proxy_sessions_translated_total", ""); n != 0 {
				t.Errorf("%v sessions translated, want 0", n)
			}
		})
	}
}

// samplingTool asks the client for a sampled message the way revision
// 2026-07-28 does (an input_required result; the client retries with the
// answer), and the way older ones do (a sampling/createMessage request
// in the session), as the SDK picks by the client's revision.
func samplingTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "sample", Description: "ask the client's model", InputSchema: emptySchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ask := &mcp.CreateMessageParams{MaxTokens: 5,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}
			if resp, ok := req.Params.InputResponses["s"]; ok {
				var text string
				switch msg := resp.(type) {
				case *mcp.CreateMessageResult:
					text = msg.Content.(*mcp.TextContent).Text
				case *mcp.CreateMessageWithToolsResult:
					if len(msg.Content) > 0 {
						text = msg.Content[0].(*mcp.TextContent).Text
					}
				default:
					return nil, fmt.Errorf("the input response is %T", resp)
				}
				return textResult("got " + text), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": ask}}, nil
		})
}

// TestStatelessSampling: a client of revision 2026-07-28 reaches the Go
// SDK v1.8's stateless handler (which serves both generations) through
// the proxy statelessly, over HTTP and over stdio: the sampling round trip
// (the server's input request, the client's retry with its answer)
// completes, and every result is byte for byte what a direct connection
// gets.
func TestStatelessSampling(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "both", Version: "1"}, nil)
	samplingTool(srv)
	up := newLoopbackServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	sample := func(cs *mcp.ClientSession, rec *recorder) []json.RawMessage {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("sample: %v %+v", err, res)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != "got sampled hello" {
			t.Errorf("sample = %q: no sampling round trip", got)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.results["tools/call"]
	}
	direct, drec := samplingClient(t, &mcp.StreamableClientTransport{Endpoint: up}, "")
	if v := direct.InitializeResult().ProtocolVersion; v != statelessVersion {
		t.Fatalf("directly negotiated %q", v)
	}
	want := sample(direct, drec)
	if len(want) != 2 || !bytes.Contains(want[0], []byte(`"input_required"`)) {
		t.Fatalf("directly: %s", want)
	}
	for _, down := range []string{"http", "stdio"} {
		t.Run(down, func(t *testing.T) {
			p := newProxy(t, Upstream{URL: up}, Policy{})
			var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"}
			if down == "stdio" {
				tr = stdioClient(t, p)
			}
			cs, rec := samplingClient(t, tr, "")
			if v := cs.InitializeResult().ProtocolVersion; v != statelessVersion {
				t.Errorf("negotiated %q through the proxy", v)
			}
			got := sample(cs, rec)
			if len(got) != len(want) {
				t.Fatalf("%d results through the proxy, %d directly", len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("result %d through the proxy:\n%s\ndirect:\n%s", i, got[i], want[i])
				}
			}
			if n := testCounter(t, p, "atlas_proxy_sessions_translated_total", ""); n != 0 {
				t.Errorf("%v sessions translated", n)
			}
		})
	}
}
