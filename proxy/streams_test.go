package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressServer is a Go SDK 1.8 server whose tool "steps" notifies
// progress n times (n from its arguments), waiting after the half for
// hold (when not nil) to be closed, and then answers.
func progressServer(hold chan struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "steps", Description: "report progress", InputSchema: emptySchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ N int }
			json.Unmarshal(req.Params.Arguments, &a)
			tok := req.Params.GetProgressToken()
			for i := 1; i <= a.N; i++ {
				if i == a.N/2+1 && hold != nil {
					select {
					case <-hold:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				if tok != nil {
					err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(a.N)})
					if err != nil {
						return nil, err
					}
				}
			}
			return textResult(fmt.Sprintf("%d steps", a.N)), nil
		})
	return srv
}

// sseEvent is one server-sent event as the client reads it.
type sseEvent struct {
	id   string
	data []byte
}

// eventReader reads server-sent events from an HTTP answer.
type eventReader struct{ br *bufio.Reader }

// next returns the next event with data, or an error at the end.
func (r eventReader) next() (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if ev.data != nil {
				return ev, nil
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "data":
			ev.data = append(ev.data, value...)
		}
	}
}

// rawSession is a Streamable HTTP session driven by hand, which never
// opens the standalone GET stream. Its requests end with ctx: a stream
// that never brings what the test waits for fails the test, not hangs it.
type rawSession struct {
	t      *testing.T
	ctx    context.Context
	url    string
	header http.Header
}

func openRawSession(t *testing.T, url, version string) *rawSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	s := &rawSession{t: t, ctx: ctx, url: url, header: http.Header{}}
	resp := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version), nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get(sessionHeader)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d, session %q", resp.StatusCode, sid)
	}
	s.header.Set(sessionHeader, sid)
	s.header.Set("Mcp-Protocol-Version", version)
	resp = s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	resp.Body.Close()
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, s.url, nil)
		req.Header = s.header.Clone()
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return s
}

func (s *rawSession) post(body string, ctx context.Context) *http.Response {
	s.t.Helper()
	if ctx == nil {
		ctx = s.ctx
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(body))
	for k, v := range s.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// resume reconnects to a stream with Last-Event-ID.
func (s *rawSession) resume(last string) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(s.ctx, http.MethodGet, s.url, nil)
	for k, v := range s.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", last)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// readUntil reads the events of one stream's body into c until until
// holds, failing the test if the stream ends first.
func (c *callEvents) readUntil(t *testing.T, body io.Reader, until func() bool) {
	t.Helper()
	er := eventReader{bufio.NewReader(body)}
	for !until() {
		ev, err := er.next()
		if err != nil {
			t.Fatalf("the stream ended early: %v (progress %v)", err, c.progress)
		}
		c.add(t, ev)
	}
}

// callEvents tallies a call's stream: the progress values it carried and
// whether its answer came, failing on an event without an id.
type callEvents struct {
	progress []float64
	answer   *jsonrpc.Response
	lastID   string
}

func (c *callEvents) add(t *testing.T, ev sseEvent) {
	t.Helper()
	if ev.id == "" {
		t.Errorf("an event without an id: %s", ev.data)
	}
	c.lastID = ev.id
	m, err := jsonrpc.DecodeMessage(ev.data)
	if err != nil {
		t.Fatalf("event %s: %v", ev.data, err)
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		if m.Method == "notifications/progress" {
			var p struct{ Progress float64 }
			json.Unmarshal(m.Params, &p)
			c.progress = append(c.progress, p.Progress)
		}
	case *jsonrpc.Response:
		c.answer = m
	}
}

// TestProgressOnCallStream: a tools/call with a progress token gets its
// progress notifications on its own POST stream, with no GET stream open,
// through the proxy as directly, every event with an id; over every
// upstream transport the Go SDK 1.8 server with an event store speaks.
func TestProgressOnCallStream(t *testing.T) {
	const n = 4
	srv := progressServer(nil)
	direct := newLoopbackServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	cases := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"direct", func(*testing.T) string { return direct }},
		{"proxy to Streamable HTTP", func(t *testing.T) string {
			return serveHTTP(t, newProxy(t, Upstream{URL: direct}, Policy{})) + "/mcp"
		}},
		{"proxy to legacy SSE", func(t *testing.T) string {
			return serveHTTP(t, newProxy(t, Upstream{URL: sdkUpstreamSSE(t, srv).URL + "/sse"}, Policy{})) + "/mcp"
		}},
		{"proxy to stdio", func(t *testing.T) string {
			return serveHTTP(t, newProxy(t, stdioUpstream(t), Policy{})) + "/mcp"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openRawSession(t, c.url(t), "2025-11-25")
			tool, steps := "steps", n
			if c.name == "proxy to stdio" {
				tool, steps = "progress", 1 // the test binary's stdio server
			}
			resp := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":{"n":%d},"_meta":{"progressToken":"tok"}}}`, tool, steps), nil)
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("the call was answered as %q, not an event stream", ct)
			}
			var got callEvents
			got.readUntil(t, resp.Body, func() bool { return got.answer != nil })
			if len(got.progress) != steps {
				t.Errorf("%d of %d progress notifications on the call's stream: %v", len(got.progress), steps, got.progress)
			}
			if got.answer.Error != nil || got.answer.ID.Raw() != int64(7) {
				t.Errorf("answer %+v", got.answer)
			}
		})
	}
}

// TestResumeAfterCut: a client cut off from a call's stream after half its
// progress reconnects with the last event id it saw and gets the rest and
// the answer, through the proxy as directly.
func TestResumeAfterCut(t *testing.T) {
	const n = 4
	for _, via := range []string{"direct", "proxy"} {
		t.Run(via, func(t *testing.T) {
			hold := make(chan struct{})
			srv := progressServer(hold)
			url := newLoopbackServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
			if via == "proxy" {
				url = serveHTTP(t, newProxy(t, Upstream{URL: url}, Policy{})) + "/mcp"
			}
			s := openRawSession(t, url, "2025-11-25")
			ctx, cut := context.WithCancel(s.ctx)
			defer cut()
			resp := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"steps","arguments":{"n":%d},"_meta":{"progressToken":1}}}`, n), ctx)
			var got callEvents
			got.readUntil(t, resp.Body, func() bool { return len(got.progress) >= n/2 })
			cut()
			resp.Body.Close()
			close(hold) // the rest is sent while no one listens
			// The server may not have seen the cut yet (409: the stream
			// is still held): a client tries again, as the SDKs do.
			r2 := s.resume(got.lastID)
			for r2.StatusCode == http.StatusConflict && s.ctx.Err() == nil {
				r2.Body.Close()
				time.Sleep(10 * time.Millisecond)
				r2 = s.resume(got.lastID)
			}
			defer r2.Body.Close()
			if r2.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(r2.Body)
				t.Fatalf("resume from %q: HTTP %d %s", got.lastID, r2.StatusCode, b)
			}
			got.readUntil(t, r2.Body, func() bool { return got.answer != nil })
			want := []float64{1, 2, 3, 4}
			if fmt.Sprint(got.progress) != fmt.Sprint(want) {
				t.Errorf("progress %v, want %v: nothing lost, nothing twice", got.progress, want)
			}
			if got.answer.Error != nil || !bytes.Contains(got.answer.Result, []byte("4 steps")) {
				t.Errorf("answer %+v %s", got.answer.Error, got.answer.Result)
			}
		})
	}
}
