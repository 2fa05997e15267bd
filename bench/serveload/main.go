// Command serveload measures atlas-reproduce serve under load, beside the
// classify command on the same tools in the same run:
//
//   - single: C concurrent keep-alive clients post one real tool per
//     request for --duration; requests/s and latency percentiles. The
//     server's RSS and Go heap are sampled before, during and after, to
//     show whether memory stays flat under sustained load.
//   - batch: --batch-clients clients post {"tools": [...]} of --batch tools;
//     tools/s.
//   - classify: the binary's classify command over the same batches as
//     JSON Lines; tools/s.
//
// The clients speak HTTP/1.1 over raw connections with prebuilt requests,
// so that on a small machine the load generator takes as little of the
// CPU the server needs as it can.
//
//	go build -o bin/atlas-reproduce ./cmd/atlas-reproduce
//	go run ./bench/serveload --binary bin/atlas-reproduce
//
// With --memory it runs the hostile loads instead (memory.go): bodies of
// millions of empty tools, on /v1/classify and /mcp, one and four at once,
// and 150 connections each holding 8 MiB-1 of body; each against its own
// server, whose peak RSS (VmHWM) it prints. With --memory --proxy it runs
// the proxy's hostile loads (proxy.go) against the proxy command.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

func main() {
	binary := flag.String("binary", "bin/atlas-reproduce", "atlas-reproduce `executable` to serve and classify with")
	clients := flag.Int("clients", 64, "concurrent clients posting single tools")
	duration := flag.Duration("duration", 60*time.Second, "length of the single-tool load")
	batch := flag.Int("batch", 1000, "tools per batch request")
	batchClients := flag.Int("batch-clients", 4, "concurrent clients posting batches")
	batchDuration := flag.Duration("batch-duration", 20*time.Second, "length of the batch load")
	memory := flag.Bool("memory", false, "run the hostile loads instead, each against its own server, and print its peak RSS")
	ceiling := flag.Int64("rss-ceiling", 3<<30, "with --memory: kill a server whose RSS passes this many `bytes` (the machine is shared)")
	settle := flag.Duration("settle", 5*time.Second, "with --memory: idle time after each load before its RSS is read again")
	only := flag.String("only", "", "with --memory: run only the loads whose name holds this `text`")
	proxyLoads := flag.Bool("proxy", false, "with --memory: run the proxy's hostile loads (proxy.go) instead of serve's")
	flag.Parse()
	if *memory && *proxyLoads {
		if err := runProxyMemory(*binary, *ceiling, *settle, *only); err != nil {
			fmt.Fprintln(os.Stderr, "serveload:", err)
			os.Exit(1)
		}
		return
	}
	if *memory {
		if err := runMemory(*binary, *ceiling, *settle, *only); err != nil {
			fmt.Fprintln(os.Stderr, "serveload:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*binary, *clients, *duration, *batch, *batchClients, *batchDuration); err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

func run(binary string, clients int, duration time.Duration, batch, batchClients int, batchDuration time.Duration) error {
	tools, err := realTools()
	if err != nil {
		return err
	}
	fmt.Printf("%d real tools; %d clients; batches of %d\n", len(tools), clients, batch)

	srv, addr, err := startServer(binary)
	if err != nil {
		return err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()

	singles := make([][]byte, len(tools))
	for i, t := range tools {
		singles[i] = request(addr, "application/json", t)
	}
	var batches [][]byte
	var batchLines [][]byte
	for i := 0; i+batch <= len(tools); i += batch {
		b := tools[i : i+batch]
		batches = append(batches, request(addr, "application/json", append(append([]byte(`{"tools": [`), bytes.Join(b, []byte(", "))...), "]}"...)))
		batchLines = append(batchLines, append(bytes.Join(b, []byte("\n")), '\n'))
	}

	// Warm up: every tool once, so pools and caches are filled before memory is sampled.
	if _, err := load(addr, clients, 2*time.Second, singles, nil); err != nil {
		return err
	}
	before := sample(srv.Process.Pid, addr)
	fmt.Printf("memory before: %s\n", before)

	samples := []memSample{before}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(duration / 6)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				samples = append(samples, sample(srv.Process.Pid, addr))
			}
		}
	}()
	h0, cpu0, self0 := histogram(addr), cpuTime(srv.Process.Pid), selfCPU()
	single, err := load(addr, clients, duration, singles, nil)
	h1, cpu1, self1 := histogram(addr), cpuTime(srv.Process.Pid), selfCPU()
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	after := sample(srv.Process.Pid, addr)
	samples = append(samples, after)
	fmt.Printf("single: %d requests in %v: %.0f requests/s, p50 %v, p99 %v, p99.9 %v, max %v\n",
		single.n, single.elapsed.Round(time.Millisecond), single.rate(), single.pct(50), single.pct(99), single.pct(99.9), single.pct(100))
	fmt.Printf("  CPU per request: server %v, load generator %v (2 cores shared with other work)\n",
		((cpu1 - cpu0) / time.Duration(single.n)).Round(100*time.Nanosecond), ((self1 - self0) / time.Duration(single.n)).Round(100*time.Nanosecond))
	fmt.Printf("  in the server (handler time, from its histogram): p50 <= %s, p99 <= %s\n", h1.quantile(h0, 0.50), h1.quantile(h0, 0.99))
	for _, s := range samples {
		fmt.Printf("  memory: %s\n", s)
	}

	var toolsDone atomic.Int64
	bat, err := load(addr, batchClients, batchDuration, batches, func() { toolsDone.Add(int64(batch)) })
	if err != nil {
		return err
	}
	serveRate := float64(toolsDone.Load()) / bat.elapsed.Seconds()
	fmt.Printf("batch: %d requests of %d tools in %v: %.0f tools/s, p50 %v, p99 %v\n",
		bat.n, batch, bat.elapsed.Round(time.Millisecond), serveRate, bat.pct(50), bat.pct(99))

	classifyRate, err := timeClassify(binary, batchLines, batchDuration)
	if err != nil {
		return err
	}
	fmt.Printf("classify: %.0f tools/s over the same batches as JSON Lines\n", classifyRate)
	fmt.Printf("batch / classify: %.2f\n", serveRate/classifyRate)
	fmt.Printf("memory after all load: %s\n", sample(srv.Process.Pid, addr))
	return nil
}

// realTools returns the tool object of every bundled real record.
func realTools() ([][]byte, error) {
	data, err := realcorpus.Read()
	if err != nil {
		return nil, err
	}
	var tools [][]byte
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var rec struct {
			Tool json.RawMessage `json:"tool"`
		}
		if err := json.Unmarshal(line, &rec); err != nil || rec.Tool == nil {
			return nil, fmt.Errorf("real record without a tool: %.100s", line)
		}
		tools = append(tools, rec.Tool)
	}
	return tools, nil
}

// startServer starts `atlas-reproduce serve` on a free loopback port.
func startServer(binary string) (*exec.Cmd, string, error) {
	return startListening(binary, serveBanner, "serve", "--listen", "127.0.0.1:0")
}

var serveBanner = regexp.MustCompile(`serving on http://(\S+)`)

// startListening starts binary with args (args[0] its command) and waits
// for the first line of its standard error, which banner must match: its
// first group is the address it serves on. The rest of standard error is
// drained.
func startListening(binary string, banner *regexp.Regexp, args ...string) (*exec.Cmd, string, error) {
	cmd := exec.Command(binary, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := banner.FindStringSubmatch(line)
	if err != nil || m == nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, "", fmt.Errorf("%s did not start: %q %v", args[0], line, err)
	}
	go io.Copy(io.Discard, stderr)
	return cmd, m[1], nil
}

func request(addr, contentType string, body []byte) []byte {
	head := "POST /v1/classify HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: " + contentType +
		"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	return append([]byte(head), body...)
}

type result struct {
	n       int
	elapsed time.Duration
	lat     []time.Duration
}

func (r *result) rate() float64 { return float64(r.n) / r.elapsed.Seconds() }

func (r *result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(float64(len(r.lat)-1) * p / 100)
	return r.lat[i].Round(time.Microsecond)
}

// load runs c clients, each on its own keep-alive connection, posting the
// requests round-robin (each client starting at its own offset) for d.
func load(addr string, c int, d time.Duration, reqs [][]byte, done func()) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	lats := make([][]time.Duration, c)
	errs := make([]error, c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				errs[w] = err
				return
			}
			defer conn.Close()
			br := bufio.NewReaderSize(conn, 64<<10)
			lat := make([]time.Duration, 0, 1<<16)
			for i := w * len(reqs) / c; ctx.Err() == nil; i++ {
				t0 := time.Now()
				if _, err := conn.Write(reqs[i%len(reqs)]); err != nil {
					errs[w] = err
					return
				}
				if err := readResponse(br); err != nil {
					errs[w] = err
					return
				}
				lat = append(lat, time.Since(t0))
				if done != nil {
					done()
				}
			}
			lats[w] = lat
		}()
	}
	wg.Wait()
	r := &result{elapsed: time.Since(start)}
	for w := range c {
		if errs[w] != nil {
			return nil, fmt.Errorf("client %d: %w", w, errs[w])
		}
		r.lat = append(r.lat, lats[w]...)
	}
	r.n = len(r.lat)
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	return r, nil
}

// readResponse reads one response, which must be 200 with a Content-Length.
func readResponse(br *bufio.Reader) error {
	status, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("status %q", bytes.TrimSpace(status))
	}
	n := -1
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(h) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(h, []byte(":")); ok && strings.EqualFold(string(k), "Content-Length") {
			n, err = strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				return err
			}
		}
	}
	if n < 0 {
		return errors.New("response without Content-Length")
	}
	_, err = br.Discard(n)
	return err
}

// timeClassify runs classify over the batches, repeated until at least d
// of work, and returns its tools/s.
func timeClassify(binary string, batches [][]byte, d time.Duration) (float64, error) {
	in := bytes.Join(batches, nil)
	perPass := int64(bytes.Count(in, []byte{'\n'}))
	var tools int64
	var spent time.Duration
	for spent < d {
		cmd := exec.Command(binary, "classify")
		cmd.Stdin = bytes.NewReader(bytes.Repeat(in, 10))
		cmd.Stdout = io.Discard
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("classify: %w", err)
		}
		spent += time.Since(t0)
		tools += 10 * perPass
	}
	return float64(tools) / spent.Seconds(), nil
}

type memSample struct {
	rss, heap int64
}

func (m memSample) String() string {
	return fmt.Sprintf("RSS %.1f MiB, Go heap in use %.1f MiB", float64(m.rss)/(1<<20), float64(m.heap)/(1<<20))
}

var (
	heapLine   = regexp.MustCompile(`(?m)^go_memstats_heap_inuse_bytes (\S+)$`)
	bucketLine = regexp.MustCompile(`(?m)^atlas_serve_request_duration_seconds_bucket\{route="/v1/classify",le="([^"]+)"\} (\S+)$`)
)

// buckets are the server's cumulative latency histogram for /v1/classify.
type buckets struct {
	le    []string
	count []float64
}

// quantile returns the upper bound of the bucket holding quantile q of the
// requests counted between b0 and b.
func (b buckets) quantile(b0 buckets, q float64) string {
	if len(b.count) == 0 || len(b0.count) != len(b.count) {
		return "?"
	}
	total := b.count[len(b.count)-1] - b0.count[len(b0.count)-1]
	for i := range b.count {
		if b.count[i]-b0.count[i] >= q*total {
			if f, err := strconv.ParseFloat(b.le[i], 64); err == nil {
				return time.Duration(f * float64(time.Second)).String()
			}
			return b.le[i]
		}
	}
	return "?"
}

func histogram(addr string) buckets {
	var b buckets
	for _, g := range bucketLine.FindAllSubmatch(scrape(addr), -1) {
		v, _ := strconv.ParseFloat(string(g[2]), 64)
		b.le, b.count = append(b.le, string(g[1])), append(b.count, v)
	}
	return b
}

func scrape(addr string) []byte {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /metrics HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr)
	b, _ := io.ReadAll(conn)
	return b
}

// sample reads the server's RSS from /proc and its heap from /metrics.
func sample(pid int, addr string) memSample {
	var m memSample
	m.rss = procKB(pid, "VmRSS:") << 10
	if g := heapLine.FindSubmatch(scrape(addr)); g != nil {
		v, _ := strconv.ParseFloat(string(g[1]), 64)
		m.heap = int64(v)
	}
	return m
}

// cpuTime is a process's user and system CPU time, from /proc (in clock
// ticks of 10 ms: precise enough over seconds of load).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields after it do not.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
