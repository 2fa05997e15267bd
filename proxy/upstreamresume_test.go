package proxy

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUpstreamResume: when the upstream's stream of a call breaks after
// half its progress, the proxy asks the upstream for the rest with
// Last-Event-ID, and its client, which saw no break, gets every progress
// notification once and the answer. An upstream whose events have no ids
// cannot be asked: the call is answered with an error naming the cause,
// not left waiting.
func TestUpstreamResume(t *testing.T) {
	const n = 4
	for _, c := range []struct {
		name   string
		events mcp.EventStore
	}{
		{"event store", mcp.NewMemoryEventStore(nil)},
		{"no event ids", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			hold := make(chan struct{})
			srv := progressServer(hold)
			up := newLoopbackServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{EventStore: c.events}))
			ct := &cutTransport{base: http.DefaultTransport, match: isCall, cut: hold}
			p := newProxy(t, Upstream{URL: up, HTTPClient: &http.Client{Transport: ct}}, Policy{})
			s := openRawSession(t, serveHTTP(t, p)+"/mcp", "2025-11-25")
			resp := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"steps","arguments":{"n":%d},"_meta":{"progressToken":"t"}}}`, n), nil)
			defer resp.Body.Close()
			var got callEvents
			got.readUntil(t, resp.Body, func() bool { return got.answer != nil })
			select {
			case <-hold:
			default:
				t.Fatal("the upstream's stream was never cut: the test tested nothing")
			}
			resumes := ct.resumed()
			// A resumption the server refused as too early (409) is
			// tried again, and counted once it succeeds.
			if n := testCounter(t, p, "atlas_proxy_streams_resumed_total", "upstream"); c.events != nil && (n < 1 || n > float64(len(resumes))) {
				t.Errorf("%v upstream resumptions counted, %d tried", n, len(resumes))
			}
			if c.events == nil {
				if got.answer.Error == nil || !strings.Contains(got.answer.Error.Error(), "ended the stream before answering") {
					t.Errorf("answer %v %s, want the error of a stream that ended", got.answer.Error, got.answer.Result)
				}
				if len(resumes) != 0 {
					t.Errorf("resumed a stream without ids: %v", resumes)
				}
				return
			}
			if len(resumes) == 0 {
				t.Error("the proxy never asked the upstream with Last-Event-ID")
			}
			if fmt.Sprint(got.progress) != "[1 2 3 4]" {
				t.Errorf("progress %v, want every step once", got.progress)
			}
			if got.answer.Error != nil || !bytes.Contains(got.answer.Result, []byte("4 steps")) {
				t.Errorf("answer %v %s", got.answer.Error, got.answer.Result)
			}
		})
	}
}

// standaloneCut holds the proxy's standalone GET to the upstream: it tells
// opened when the first is answered, cuts it when cut is closed, and holds
// the next GET (told on again) until proceed is closed.
type standaloneCut struct {
	base             http.RoundTripper
	opened, again    chan struct{}
	cut, proceed     chan struct{}
	openOnce, reOnce sync.Once
	mu               sync.Mutex
	lastIDs          []string
}

func (s *standaloneCut) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return s.base.RoundTrip(req)
	}
	s.mu.Lock()
	s.lastIDs = append(s.lastIDs, req.Header.Get("Last-Event-ID"))
	first := len(s.lastIDs) == 1
	s.mu.Unlock()
	if !first {
		s.reOnce.Do(func() { close(s.again) })
		select {
		case <-s.proceed:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		return s.base.RoundTrip(req)
	}
	resp, err := s.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	s.openOnce.Do(func() { close(s.opened) })
	body := resp.Body
	go func() {
		select {
		case <-s.cut:
			body.Close()
		case <-req.Context().Done():
		}
	}()
	return resp, nil
}

// TestUpstreamStandaloneResume: when the upstream's standalone stream
// breaks, the proxy opens it again with the last event id it had, and a
// notification the upstream sent while it was broken reaches the client.
func TestUpstreamStandaloneResume(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t0", InputSchema: emptySchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("0"), nil
	})
	up := newLoopbackServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	sc := &standaloneCut{base: http.DefaultTransport, opened: make(chan struct{}), again: make(chan struct{}),
		cut: make(chan struct{}), proceed: make(chan struct{})}
	defer func() {
		select {
		case <-sc.proceed:
		default:
			close(sc.proceed)
		}
	}()
	p := newProxy(t, Upstream{URL: up, HTTPClient: &http.Client{Transport: sc}}, Policy{})
	changed := make(chan struct{}, 4)
	cs := connectVersion(t, &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, p) + "/mcp"},
		&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}, legacyVersion)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-ctx.Done():
			sc.mu.Lock()
			defer sc.mu.Unlock()
			t.Fatalf("never %s (GETs with Last-Event-ID %q)", what, sc.lastIDs)
		}
	}
	addTool := func(name string) {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: emptySchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult(name), nil
		})
	}
	wait(sc.opened, "opened the standalone stream")
	addTool("t1")
	wait(changed, "relayed the first list_changed")
	// The proxy opens again a stream that lasted a second or more, not
	// one a server closes at once.
	time.Sleep(1100 * time.Millisecond)
	close(sc.cut)
	wait(sc.again, "opened the standalone stream again")
	addTool("t2") // while no stream is open
	close(sc.proceed)
	wait(changed, "relayed the list_changed sent while the stream was broken")
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.lastIDs) < 2 || sc.lastIDs[1] == "" {
		t.Errorf("the standalone stream was opened again with Last-Event-ID %q", sc.lastIDs)
	}
}

// TestUpstreamPolling: an upstream that closes a call's stream mid-call
// and asks to be polled (SEP-1699: an event with "retry:", then the end
// of the stream) is asked for the rest with Last-Event-ID after the delay
// it gave, and the client, which saw no break, gets all the progress and
// the answer.
func TestUpstreamPolling(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "polled", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "polled", InputSchema: emptySchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= 3; i++ {
				if i == 2 {
					req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 20 * time.Millisecond})
				}
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i)}); err != nil {
					return nil, err
				}
			}
			return textResult("polled"), nil
		})
	up := newLoopbackServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	p := newProxy(t, Upstream{URL: up}, Policy{})
	s := openRawSession(t, serveHTTP(t, p)+"/mcp", "2025-11-25")
	resp := s.post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"polled","arguments":{},"_meta":{"progressToken":"t"}}}`, nil)
	defer resp.Body.Close()
	var got callEvents
	got.readUntil(t, resp.Body, func() bool { return got.answer != nil })
	if fmt.Sprint(got.progress) != "[1 2 3]" {
		t.Errorf("progress %v, want [1 2 3]", got.progress)
	}
	if got.answer.Error != nil || !bytes.Contains(got.answer.Result, []byte("polled")) {
		t.Errorf("answer %v %s", got.answer.Error, got.answer.Result)
	}
	if n := testCounter(t, p, "atlas_proxy_streams_resumed_total", "upstream"); n < 1 {
		t.Errorf("%v upstream resumptions counted: the stream was not closed, the test tested nothing", n)
	}
}
