package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallLatency pairs a tools/call made directly to an SDK server on
// loopback with the same call through the proxy (Streamable HTTP both
// sides), alternating so that both see the same machine; it reports each
// path's p50 and p99 and what the proxy adds.
func BenchmarkCallLatency(b *testing.B) {
	up := sdkUpstreamHTTP(b, upstreamServer(nil, nil))
	p, err := New(Config{Upstream: Upstream{URL: up.URL}})
	if err != nil {
		b.Fatal(err)
	}
	base := serveHTTP(b, p)
	ctx := context.Background()
	connect := func(url string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	direct, proxied := connect(up.URL), connect(base+"/mcp")
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 50 { // warm both paths: connections, pools
		call(direct)
		call(proxied)
	}
	var d, q []time.Duration
	b.ResetTimer()
	for range b.N {
		d = append(d, call(direct))
		q = append(q, call(proxied))
	}
	b.StopTimer()
	dp50, dp99 := percentiles(d)
	qp50, qp99 := percentiles(q)
	b.ReportMetric(us(dp50), "direct-p50-µs")
	b.ReportMetric(us(dp99), "direct-p99-µs")
	b.ReportMetric(us(qp50), "proxy-p50-µs")
	b.ReportMetric(us(qp99), "proxy-p99-µs")
	b.ReportMetric(us(qp50-dp50), "added-p50-µs")
	b.ReportMetric(us(qp99-dp99), "added-p99-µs")
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*50/100], s[min(len(s)*99/100, len(s)-1)]
}

// bench5000 returns the first 5,000 real tools.
func bench5000(b *testing.B) []json.RawMessage {
	tools, _ := corpusTools(b)
	return tools[:5000]
}

// BenchmarkToolsList5000 times a tools/list of 5,000 real tools, end to
// end: direct from the server, through a proxy that has never seen them
// (every tool classified), and through one whose cache holds them (a hash
// per tool). The client speaks raw JSON-RPC over the SDK's transports (a
// typed client's own decoding would dwarf what is measured) and each
// iteration is a new session: initialize, initialized, tools/list.
func BenchmarkToolsList5000(b *testing.B) {
	tools := bench5000(b)
	up := rawServer(b, tools)
	ctx := context.Background()
	list := func(b *testing.B, tr mcp.Transport) {
		conn, err := tr.Connect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		call := func(id int64, method, params string) json.RawMessage {
			rid, _ := jsonrpc.MakeID(float64(id))
			if err := conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(params)}); err != nil {
				b.Fatal(err)
			}
			msg, err := conn.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			resp, ok := msg.(*jsonrpc.Response)
			if !ok || resp.Error != nil {
				b.Fatalf("%s: %+v", method, msg)
			}
			return resp.Result
		}
		call(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}`)
		if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
			b.Fatal(err)
		}
		res := call(2, "tools/list", `{}`)
		if n := bytes.Count(res, []byte(`"inputSchema"`)); n < 5000 {
			b.Fatalf("%d tools listed", n)
		}
	}
	b.Run("direct", func(b *testing.B) {
		for range b.N {
			list(b, &mcp.StreamableClientTransport{Endpoint: up.URL})
		}
	})
	b.Run("proxy-cold", func(b *testing.B) {
		for range b.N {
			p, _ := New(Config{Upstream: Upstream{URL: up.URL}})
			list(b, &mcp.StreamableClientTransport{Endpoint: serveHTTP(b, p) + "/mcp"})
		}
	})
	b.Run("proxy-warm", func(b *testing.B) {
		p, _ := New(Config{Upstream: Upstream{URL: up.URL}})
		base := serveHTTP(b, p) + "/mcp"
		list(b, &mcp.StreamableClientTransport{Endpoint: base})
		b.ResetTimer()
		for range b.N {
			list(b, &mcp.StreamableClientTransport{Endpoint: base})
		}
	})
}

// BenchmarkLabelList5000 is the proxy's own share of a 5,000-tool list:
// the rewrite of the raw result, cold (every tool classified) and warm.
func BenchmarkLabelList5000(b *testing.B) {
	tools := bench5000(b)
	result := []byte(`{"tools":[`)
	for i, t := range tools {
		if i > 0 {
			result = append(result, ',')
		}
		result = append(result, t...)
	}
	result = append(result, "]}"...)
	newSession := func() *session {
		p, _ := New(Config{Upstream: Upstream{URL: "http://127.0.0.1:1/"}})
		return &session{p: p, pending: map[any]pendingCall{}, tools: map[string]*toolState{}}
	}
	b.Run("cold", func(b *testing.B) {
		b.SetBytes(int64(len(result)))
		for range b.N {
			b.StopTimer()
			s := newSession()
			b.StartTimer()
			s.labelList(result)
		}
	})
	b.Run("warm", func(b *testing.B) {
		s := newSession()
		s.labelList(result)
		b.SetBytes(int64(len(result)))
		b.ResetTimer()
		for range b.N {
			s.labelList(result)
		}
	})
}

// BenchmarkSoak runs sessions against the proxy for a while (10s, or
// ATLAS_PROXY_SOAK, e.g. 60s): four clients, each opening a session,
// listing 100 real tools, calling a tool 20 times and closing, again and
// again. It reports the resident set at the start, its peak and at the end,
// and the goroutines left over: a leak per session would show in both.
// Run it once: -bench Soak -benchtime 1x.
func BenchmarkSoak(b *testing.B) {
	d := 10 * time.Second
	if s := os.Getenv("ATLAS_PROXY_SOAK"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			b.Fatal(err)
		}
	}
	tools, _ := corpusTools(b)
	up := rawServer(b, tools[:100])
	p, err := New(Config{Upstream: Upstream{URL: up.URL}})
	if err != nil {
		b.Fatal(err)
	}
	base := serveHTTP(b, p)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	runtime.GC()
	goroutines := runtime.NumGoroutine()
	start := rssMB()
	peak := start
	var mu sync.Mutex
	sessions := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
				if err != nil {
					continue
				}
				cs.ListTools(ctx, nil)
				for range 20 {
					cs.CallTool(ctx, &mcp.CallToolParams{Name: "anything", Arguments: map[string]any{}})
				}
				cs.Close()
				mu.Lock()
				sessions++
				mu.Unlock()
			}
		}()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var series []string
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			r := rssMB()
			peak = max(peak, r)
			series = append(series, strconv.FormatFloat(r, 'f', 1, 64))
		}
	}
	wg.Wait()
	p.sessions.closeAll()
	runtime.GC()
	end := rssMB()
	b.Logf("RSS MB each second: %v", series)
	b.ReportMetric(start, "rss-start-MB")
	b.ReportMetric(peak, "rss-peak-MB")
	b.ReportMetric(end, "rss-end-MB")
	b.ReportMetric(float64(sessions), "sessions")
	b.ReportMetric(float64(runtime.NumGoroutine()-goroutines), "goroutines-left")
}

// rssMB reads the resident set size of this process.
func rssMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(data) {
		if f := bytes.Fields(line); len(f) >= 2 && string(f[0]) == "VmRSS:" {
			kb, _ := strconv.ParseFloat(string(f[1]), 64)
			return kb / 1024
		}
	}
	return 0
}
