package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkProbe2500 probes a loopback server of 2,500 tools in pages of
// 100: the crawl's raw capture against the SDK's own typed ListTools, the
// cost the capture adds to keeping what the server sent.
func BenchmarkProbe2500(b *testing.B) {
	s := crawltest.NewSDKServer(crawltest.GenTools(2500, "bench"), 100)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	b.Cleanup(ts.Close)
	_, u, err := probe.Normalise(ts.URL)
	if err != nil {
		b.Fatal(err)
	}
	opt := probe.Options{Timeout: time.Minute, AllowAddr: crawltest.Loopback}

	b.Run("raw-capture", func(b *testing.B) {
		p := probe.NewProber(opt)
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
				&mcp.ClientSessionOptions{ProtocolVersion: probe.RequestedVersion})
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

// BenchmarkCrawlMemoryBudget crawls eight loopback servers that each send
// one 8 MiB tool (from one shared buffer, so the servers' own memory does
// not count) at once, with the default budget and with a 24 MiB one, and
// reports the budget's counted peak beside the heap in use at its peak:
// the budget bounds the bytes read; the process holds a small multiple of
// them in transient copies (read-ahead, the SDK's read, decoding, compaction).
func BenchmarkCrawlMemoryBudget(b *testing.B) {
	const servers, toolBytes = 8, 8 << 20
	page := []byte(`{"tools":[{"name":"big","description":"` + strings.Repeat("a", toolBytes) + `","inputSchema":{"type":"object"}}]}`)
	var lines []string
	for range servers {
		ts := httptest.NewServer(crawltest.RPCHandler(func(w http.ResponseWriter, _ *http.Request, method string, _ json.RawMessage) (string, bool) {
			if method == "initialize" {
				return crawltest.InitResult, true
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":`)
			w.Write(page)
			io.WriteString(w, `}`)
			return "", false
		}))
		b.Cleanup(ts.Close)
		lines = append(lines, ts.URL)
	}
	cands := filepath.Join(b.TempDir(), "c.txt")
	os.WriteFile(cands, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	for _, c := range []struct {
		budget int64
		soft   bool
	}{{probe.DefaultMaxMemory, false}, {24 << 20, false}, {24 << 20, true}} {
		budget := c.budget
		name := fmt.Sprintf("budget=%dMiB", budget>>20)
		if c.soft {
			name += ",soft-limit"
		}
		b.Run(name, func(b *testing.B) {
			if c.soft {
				// What crawl sets: the runtime's soft limit at
				// SoftLimitFactor times the budget.
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(probe.SoftLimitFactor * budget))
			}
			var counted, heap float64
			for b.Loop() {
				runtime.GC()
				var peak atomic.Uint64
				stop, sampled := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(sampled)
					var m runtime.MemStats
					for {
						runtime.ReadMemStats(&m)
						peak.Store(max(peak.Load(), m.HeapInuse))
						select {
						case <-stop:
							return
						case <-time.After(2 * time.Millisecond):
						}
					}
				}()
				sum, err := Run(context.Background(), Options{Candidates: cands, Out: b.TempDir(), Concurrency: servers,
					Probe: probe.Options{Timeout: time.Minute, MaxBytes: 10 << 20, AllowAddr: crawltest.Loopback}, MaxMemory: budget})
				close(stop)
				<-sampled
				if err != nil || sum.Reachable != servers {
					b.Fatalf("%v %+v", err, sum)
				}
				counted, heap = max(counted, float64(sum.MemoryPeak)/(1<<20)), max(heap, float64(peak.Load())/(1<<20))
			}
			b.ReportMetric(counted, "counted-MiB")
			b.ReportMetric(heap, "peak-heap-MiB")
		})
	}
}
