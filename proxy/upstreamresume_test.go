package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

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
			er := eventReader{bufio.NewReader(resp.Body)}
			for got.answer == nil {
				ev, err := er.next()
				if err != nil {
					t.Fatalf("the stream ended before the answer: %v (progress %v)", err, got.progress)
				}
				got.add(t, ev)
			}
			select {
			case <-hold:
			default:
				t.Fatal("the upstream's stream was never cut: the test tested nothing")
			}
			resumes := ct.resumed()
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
