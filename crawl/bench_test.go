package crawl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkProbe2500 probes a loopback server of 2,500 tools in pages of
// 100: the crawl's raw capture against the SDK's own typed ListTools, the
// cost the capture adds to keeping what the server sent.
func BenchmarkProbe2500(b *testing.B) {
	s := newSDKServer(genTools(2500, "bench"), 100)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	b.Cleanup(ts.Close)
	_, u, err := Normalise(ts.URL)
	if err != nil {
		b.Fatal(err)
	}
	opt := ProbeOptions{Timeout: time.Minute, AllowAddr: loopback}

	b.Run("raw-capture", func(b *testing.B) {
		p := NewProber(opt)
		defer p.Close()
		for b.Loop() {
			if r := p.Probe(context.Background(), u); !r.Reachable || len(r.Tools) != 2500 {
				b.Fatalf("%v %s", r.Reachable, r.Error)
			}
		}
	})
	b.Run("sdk-typed", func(b *testing.B) {
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.Transport.(*http.Transport).CloseIdleConnections()
		for b.Loop() {
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
			cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, DisableStandaloneSSE: true},
				&mcp.ClientSessionOptions{ProtocolVersion: RequestedVersion})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, err := range cs.Tools(context.Background(), nil) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			cs.Close()
			if n != 2500 {
				b.Fatalf("%d tools", n)
			}
		}
	})
}
