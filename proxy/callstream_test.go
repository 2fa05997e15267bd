package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessCall posts one request of revision 2026-07-28 (no session: its
// version, the client's info and capabilities in _meta and the headers)
// to url, ending with ctx.
func statelessCall(t *testing.T, ctx context.Context, url, method, name, params string) *http.Response {
	t.Helper()
	meta := fmt.Sprintf(`"_meta":{"progressToken":"tok","%s":%q,"%s":{"name":"raw","version":"1"},"%s":{}}`,
		mcp.MetaKeyProtocolVersion, statelessVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"c1","method":%q,"params":{%s,%s}}`, method, params, meta)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", statelessVersion)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// resumeCall reconnects to a call's stream with Last-Event-ID and no
// session, as a client of revision 2026-07-28 does.
func resumeCall(t *testing.T, ctx context.Context, url, last string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", statelessVersion)
	req.Header.Set("Last-Event-ID", last)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// statelessProgressUpstream serves progressServer(hold) as a server of
// revision 2026-07-28 (stateless) over Streamable HTTP.
func statelessProgressUpstream(t *testing.T, hold chan struct{}) string {
	srv := progressServer(hold)
	return newLoopbackServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true}))
}

// TestStatelessResume: a client of revision 2026-07-28 whose call's
// stream is cut after half its progress reconnects to the proxy with
// Last-Event-ID (no session) and gets the rest and the answer, every event
// with an id, nothing lost and nothing twice; over a Streamable HTTP
// upstream (the call's upstream stream, relayed) and a legacy SSE one
// (the link).
func TestStatelessResume(t *testing.T) {
	const n = 4
	cases := []struct {
		name string
		up   func(t *testing.T, hold chan struct{}) Upstream
	}{
		{"Streamable HTTP", func(t *testing.T, hold chan struct{}) Upstream {
			return Upstream{URL: statelessProgressUpstream(t, hold)}
		}},
		{"legacy SSE", func(t *testing.T, hold chan struct{}) Upstream {
			return Upstream{URL: sseUpstream2026(t, progressServer(hold)) + "/sse"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hold := make(chan struct{})
			p := newProxy(t, c.up(t, hold), Policy{})
			url := serveHTTP(t, p) + "/mcp"
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			callCtx, cut := context.WithCancel(ctx)
			defer cut()
			resp := statelessCall(t, callCtx, url, "tools/call", "steps", fmt.Sprintf(`"name":"steps","arguments":{"n":%d}`, n))
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("the call was answered HTTP %d %q, not an event stream: %s", resp.StatusCode, ct, b)
			}
			var got callEvents
			got.readUntil(t, resp.Body, func() bool { return len(got.progress) >= n/2 })
			cut()
			resp.Body.Close()
			close(hold) // the rest comes while no one listens

			r2 := resumeCall(t, ctx, url, got.lastID)
			defer r2.Body.Close()
			if r2.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(r2.Body)
				t.Fatalf("resume from %q: HTTP %d %s", got.lastID, r2.StatusCode, b)
			}
			// Read here, not by readUntil: the same reader must see the
			// stream end after the answer.
			er := eventReader{bufio.NewReader(r2.Body)}
			for got.answer == nil {
				ev, err := er.next()
				if err != nil {
					t.Fatalf("the resumed stream ended before the answer: %v (progress %v)", err, got.progress)
				}
				got.add(t, ev)
			}
			if want := "[1 2 3 4]"; fmt.Sprint(got.progress) != want {
				t.Errorf("progress %v, want %v: nothing lost, nothing twice", got.progress, want)
			}
			if got.answer.Error != nil || got.answer.ID.Raw() != "c1" || !bytes.Contains(got.answer.Result, []byte("4 steps")) {
				t.Errorf("answer %+v %s", got.answer.Error, got.answer.Result)
			}
			if _, err := er.next(); err == nil {
				t.Errorf("the stream went on after the answer")
			}
			// A client that had it all but could not know it resumes
			// from its last id and gets nothing more.
			r3 := resumeCall(t, ctx, url, got.lastID)
			defer r3.Body.Close()
			if r3.StatusCode != http.StatusOK {
				t.Fatalf("resume after the answer: HTTP %d", r3.StatusCode)
			}
			if ev, err := (eventReader{bufio.NewReader(r3.Body)}).next(); err == nil {
				t.Errorf("resumed after the answer, got %s again", ev.data)
			}
			if n := testCounter(t, p, "atlas_proxy_streams_resumed_total", "client"); n != 2 {
				t.Errorf("%v resumptions counted, want 2", n)
			}
		})
	}
}

// TestStatelessResumeRefused: a resumption of what the proxy does not
// hold is refused with a status, not answered with an empty stream.
func TestStatelessResumeRefused(t *testing.T) {
	url := serveHTTP(t, newProxy(t, Upstream{URL: statelessProgressUpstream(t, nil)}, Policy{})) + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	// A call answered whole: its stream is held, with 2 events (one
	// progress notification, the answer) after the first.
	resp := statelessCall(t, ctx, url, "tools/call", "steps", `"name":"steps","arguments":{"n":1}`)
	var got callEvents
	got.readUntil(t, resp.Body, func() bool { return got.answer != nil })
	resp.Body.Close()
	stream, _, _ := strings.Cut(got.lastID, "_")
	for _, c := range []struct {
		last string
		want int
	}{
		{"nonsense", http.StatusBadRequest},
		{"ABC_-1", http.StatusBadRequest},
		{"ABC_x", http.StatusBadRequest},
		{"UNKNOWNSTREAM_1", http.StatusNotFound},
		{stream + "_3", http.StatusBadRequest}, // beyond what was sent
		{stream + "_1", http.StatusOK},
	} {
		resp := resumeCall(t, ctx, url, c.last)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Last-Event-ID %q: HTTP %d, want %d", c.last, resp.StatusCode, c.want)
		}
	}
}

// TestStatelessResumeWait: a 2026 call whose client was cut off and did
// not come back within ResumeWait is ended upstream (its request is
// closed, as the cut would have closed it on a direct connection), and its
// stream is no longer held.
func TestStatelessResumeWait(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := mcp.NewServer(&mcp.Implementation{Name: "block", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: emptySchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1})
			if err != nil {
				return nil, err
			}
			select {
			case <-ctx.Done():
			case <-release:
			}
			return textResult("released"), nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	// The Go SDK's stateless server does not cancel a handler whose
	// request was closed: the test watches the request itself.
	ended := make(chan struct{})
	var once sync.Once
	up := newLoopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			stop := context.AfterFunc(r.Context(), func() {
				select {
				case <-release:
				default:
					once.Do(func() { close(ended) })
				}
			})
			defer stop()
		}
		h.ServeHTTP(w, r)
	}))
	p, err := New(Config{Upstream: Upstream{URL: up}, ResumeWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, p) + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	callCtx, cut := context.WithCancel(ctx)
	resp := statelessCall(t, callCtx, url, "tools/call", "block", `"name":"block","arguments":{}`)
	var got callEvents
	got.readUntil(t, resp.Body, func() bool { return len(got.progress) >= 1 })
	cut()
	resp.Body.Close()
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the upstream's request was never ended")
	}
	// The stream is forgotten just before the call is cancelled.
	r2 := resumeCall(t, ctx, url, got.lastID)
	r2.Body.Close()
	if r2.StatusCode != http.StatusNotFound {
		t.Errorf("resume after ResumeWait: HTTP %d, want 404", r2.StatusCode)
	}
	if n := testCounter(t, p, "atlas_proxy_calls_abandoned_total", ""); n != 1 {
		t.Errorf("%v calls counted abandoned, want 1", n)
	}
}

// cutTransport cuts the answer to the first request it carries that
// match selects after its second progress notification, and closes cut
// then; every GET with Last-Event-ID it carries is counted.
type cutTransport struct {
	base    http.RoundTripper
	match   func(*http.Request) bool
	cut     chan struct{}
	once    sync.Once
	mu      sync.Mutex
	resumes []string
}

func (c *cutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != "" {
		c.mu.Lock()
		c.resumes = append(c.resumes, req.Header.Get("Last-Event-ID"))
		c.mu.Unlock()
	}
	matched := req.Method == http.MethodPost && c.match(req)
	resp, err := c.base.RoundTrip(req)
	if err != nil || !matched {
		return resp, err
	}
	first := false
	c.once.Do(func() { first = true })
	if first {
		resp.Body = &cutBody{ReadCloser: resp.Body, progress: 2, done: func() { close(c.cut) }}
	}
	return resp, nil
}

// resumed is what the transport counted.
func (c *cutTransport) resumed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.resumes)
}

// isCall matches a request of a tools/call, by its body.
func isCall(req *http.Request) bool {
	if req.GetBody == nil {
		return false
	}
	b, err := req.GetBody()
	if err != nil {
		return false
	}
	defer b.Close()
	data, _ := io.ReadAll(b)
	return bytes.Contains(data, []byte(`"method":"tools/call"`))
}

// cutBody passes what it reads until the end of the event that holds its
// progress-th progress notification, and then fails as a broken
// connection does.
type cutBody struct {
	io.ReadCloser
	progress int
	seen     []byte
	cut      bool
	done     func()
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.cut {
		return 0, io.ErrUnexpectedEOF
	}
	n, err := b.ReadCloser.Read(p)
	start := len(b.seen)
	b.seen = append(b.seen, p[:n]...)
	if at := b.cutAt(); at >= 0 {
		b.cut = true
		b.ReadCloser.Close()
		b.done()
		return at - start, nil
	}
	return n, err
}

// cutAt is where the event of the progress-th notification ends in what
// was read, or -1.
func (b *cutBody) cutAt() int {
	rest, off := b.seen, 0
	for i := 0; i < b.progress; i++ {
		j := bytes.Index(rest, []byte("notifications/progress"))
		if j < 0 {
			return -1
		}
		rest, off = rest[j+1:], off+j+1
	}
	j := bytes.Index(rest, []byte("\n\n"))
	if j < 0 {
		return -1
	}
	return off + j + 2
}

// TestStatelessResumeSDKClient: the Go SDK 1.8 client of revision
// 2026-07-28, cut off mid-call through the proxy to a Streamable HTTP
// upstream, resumes by itself with Last-Event-ID and its call completes
// with every progress notification once.
func TestStatelessResumeSDKClient(t *testing.T) {
	const n = 4
	hold := make(chan struct{})
	url := serveHTTP(t, newProxy(t, Upstream{URL: statelessProgressUpstream(t, hold)}, Policy{})) + "/mcp"
	ct := &cutTransport{base: http.DefaultTransport, match: isCall, cut: hold}
	var mu sync.Mutex
	var progress []float64
	cs := connectClient(t, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: ct}},
		&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		}})
	if v := cs.InitializeResult().ProtocolVersion; v != statelessVersion {
		t.Fatalf("negotiated %q, want %s", v, statelessVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{"n": n}}
	params.SetProgressToken("p")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "4 steps" {
		t.Fatalf("call: %v %+v", err, res)
	}
	select {
	case <-hold:
	default:
		t.Fatal("the call's stream was never cut: the test tested nothing")
	}
	if resumes := ct.resumed(); len(resumes) != 1 {
		t.Errorf("the client resumed %d times (%v), want once", len(resumes), resumes)
	}
	// The client's handler runs in goroutines of its own, maybe after the
	// call returned, in any order.
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(progress)
	}
	for count() < n && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(progress)
	if fmt.Sprint(progress) != "[1 2 3 4]" {
		t.Errorf("progress notifications %v, want each of 1 to %d once", progress, n)
	}
}

// sseUpstream2026 serves srv over the legacy HTTP+SSE transport speaking
// revision 2026-07-28 too, as servers of other SDKs do over it (mcp-go):
// the Go SDK's SSEHandler advertises only the older revisions on it, so
// its transport is handed to the server without the method that says so.
func sseUpstream2026(t *testing.T, srv *mcp.Server) string {
	var mu sync.Mutex
	sessions := map[string]*mcp.SSEServerTransport{}
	var n int
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		mu.Lock()
		n++
		id := fmt.Sprint(n)
		tr := &mcp.SSEServerTransport{Endpoint: "/message?session=" + id, Response: w}
		sessions[id] = tr
		mu.Unlock()
		ss, err := srv.Connect(r.Context(), anyRevision{tr}, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		<-r.Context().Done()
		ss.Close()
		mu.Lock()
		delete(sessions, id)
		mu.Unlock()
	})
	mux.HandleFunc("POST /message", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tr := sessions[r.URL.Query().Get("session")]
		mu.Unlock()
		if tr == nil {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		tr.ServeHTTP(w, r)
	})
	return newLoopbackServer(t, mux)
}

// anyRevision is a transport that does not restrict the revisions its
// server advertises.
type anyRevision struct{ t *mcp.SSEServerTransport }

func (a anyRevision) Connect(ctx context.Context) (mcp.Connection, error) { return a.t.Connect(ctx) }

// TestShutdownDuringStatelessStream: a shutdown ends the 2026 calls whose
// streams the proxy holds, one with its client reading and one whose
// client was cut off, and Serve returns; no stream is left.
func TestShutdownDuringStatelessStream(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	p := newProxy(t, Upstream{URL: statelessProgressUpstream(t, hold)}, Policy{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- p.Serve(serveCtx, ln) }()
	url := "http://" + ln.Addr().String() + "/mcp"
	var readers []*bufio.Reader
	for i, cutOff := range []bool{false, true} {
		callCtx, cut := context.WithCancel(ctx)
		defer cut()
		resp := statelessCall(t, callCtx, url, "tools/call", "steps", `"name":"steps","arguments":{"n":4}`)
		defer resp.Body.Close()
		var got callEvents
		er := eventReader{bufio.NewReader(resp.Body)}
		for len(got.progress) < 2 {
			ev, err := er.next()
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			got.add(t, ev)
		}
		if cutOff {
			cut()
		} else {
			readers = append(readers, er.br)
		}
	}
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Serve never returned")
	}
	if _, err := io.Copy(io.Discard, readers[0]); err != nil && ctx.Err() != nil {
		t.Errorf("the reading client's stream never ended: %v", err)
	}
	p.streams.mu.Lock()
	defer p.streams.mu.Unlock()
	if n := len(p.streams.m); n != 0 {
		t.Errorf("%d streams left after the shutdown", n)
	}
}
