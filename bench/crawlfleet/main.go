// Command crawlfleet measures crawl and merge on a fleet of loopback MCP
// servers with heavy-tailed latency, some of which hang (accept the
// request and never answer). The fleet runs in this process; each crawl
// and merge is a child process of the binary under test, so its CPU time
// (user+sys) and peak resident set (ru_maxrss) are its own.
//
//	go build -o bin/atlas-reproduce ./cmd/atlas-reproduce
//	go run ./bench/crawlfleet --binary bin/atlas-reproduce --servers 2000 --concurrency 32,64,128
//	go run ./bench/crawlfleet --binary bin/atlas-reproduce --servers 20000 --concurrency 128 --shards 16
//
// Each server is a Streamable HTTP MCP server of the Go SDK (stateless,
// JSON answers) behind a delay drawn per request from a Pareto
// distribution (--latency-min, --latency-alpha), on one of --hosts loopback
// addresses (127.0.1.1, ...), so that the per-host bound acts as on a
// real list. A share --hang of the servers never answer. The output is one
// Markdown table row per crawl: servers/s, CPU per server, peak RSS, and
// the share of the probes' slot time spent on the hanging servers (from
// elapsed_ms). With --shards N it also crawls N shards (each at the first
// concurrency) and times the merge of them.
package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("binary", "bin/atlas-reproduce", "the atlas-reproduce `binary` to measure")
	servers := flag.Int("servers", 2000, "servers in the fleet")
	hosts := flag.Int("hosts", 256, "loopback addresses the servers are spread over")
	hang := flag.Float64("hang", 0.015, "share of the servers that never answer")
	latMin := flag.Duration("latency-min", 20*time.Millisecond, "smallest delay of an answer (the Pareto scale)")
	alpha := flag.Float64("latency-alpha", 1.5, "Pareto shape of the delays: smaller is a heavier tail")
	timeout := flag.Duration("timeout", 3*time.Second, "crawl --timeout")
	concs := flag.String("concurrency", "32,64,128", "comma-separated crawl --concurrency values, one crawl each")
	shards := flag.Int("shards", 0, "also crawl the fleet in this many shards and time their merge")
	work := flag.String("work", "", "`DIR` for the candidates and releases (default: a temporary folder, removed)")
	seed := flag.Uint64("seed", 1, "seed of the fleet")
	flag.Parse()

	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "crawlfleet-")
		check(err)
		defer os.RemoveAll(d)
		dir = d
	}
	fl, err := startFleet(*servers, *hosts, *hang, *latMin, *alpha, *seed)
	check(err)
	defer fl.close()
	cands := filepath.Join(dir, "candidates.jsonl")
	check(os.WriteFile(cands, []byte(strings.Join(fl.urls, "\n")+"\n"), 0o644))

	cpu, _ := os.ReadFile("/proc/cpuinfo")
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("fleet: %d servers on %d hosts, %d hanging, latency Pareto(%v, %.2f), --timeout %v; %s; load %s\n",
		*servers, *hosts, len(fl.hanging), *latMin, *alpha, *timeout, cpuModel(string(cpu)), strings.TrimSpace(string(load)))
	fmt.Println("| servers | concurrency | wall s | servers/s | CPU s (user+sys) | CPU ms/server | peak RSS MB | hanging: share of servers | hanging: share of slot time |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	var first int
	for _, c := range strings.Split(*concs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		check(err)
		if first == 0 {
			first = n
		}
		out := filepath.Join(dir, "whole-"+c)
		m := runChild(*bin, "crawl", "--candidates", cands, "--out", out, "--concurrency", c, "--timeout", timeout.String(), "--allow-private", "--progress=false")
		share := fl.slotShare(filepath.Join(out, "servers.jsonl.gz"))
		fmt.Printf("| %d | %d | %.1f | %.0f | %.1f | %.2f | %.0f | %.1f%% | %.1f%% |\n", *servers, n, m.wall.Seconds(), float64(*servers)/m.wall.Seconds(),
			m.cpu.Seconds(), 1000*m.cpu.Seconds()/float64(*servers), float64(m.maxRSS)/(1<<20), 100*float64(len(fl.hanging))/float64(*servers), 100*share)
	}
	if *shards > 0 {
		var dirs []string
		var cpuSum time.Duration
		for k := range *shards {
			out := filepath.Join(dir, fmt.Sprintf("shard-%d", k))
			m := runChild(*bin, "crawl", "--candidates", cands, "--out", out, "--concurrency", strconv.Itoa(first), "--timeout", timeout.String(),
				"--allow-private", "--progress=false", "--no-elapsed", "--shard", fmt.Sprintf("%d/%d", k, *shards))
			cpuSum += m.cpu
			dirs = append(dirs, out)
		}
		merged := filepath.Join(dir, "merged")
		m := runChild(*bin, append([]string{"merge", "--out", merged}, dirs...)...)
		fmt.Printf("\n%d shards crawled (CPU %.1f s in all); merge of %d servers: wall %.2f s, CPU %.2f s, peak RSS %.0f MB\n",
			*shards, cpuSum.Seconds(), *servers, m.wall.Seconds(), m.cpu.Seconds(), float64(m.maxRSS)/(1<<20))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "crawlfleet:", err)
		os.Exit(1)
	}
}

func cpuModel(cpuinfo string) string {
	for _, l := range strings.Split(cpuinfo, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// measure is one child's wall time, CPU time and peak RSS.
type measure struct {
	wall, cpu time.Duration
	maxRSS    int64
}

func runChild(bin string, args ...string) measure {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	check(err)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return measure{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), maxRSS: ru.Maxrss << 10}
}

// fleet is the servers: their URLs in candidate order, which hang.
type fleet struct {
	urls    []string
	hanging map[string]bool // server_id
	srvs    []*http.Server
	stop    chan struct{}
}

func startFleet(n, hosts int, hang float64, latMin time.Duration, alpha float64, seed uint64) (*fleet, error) {
	fl := &fleet{hanging: map[string]bool{}, stop: make(chan struct{})}
	rng := rand.New(rand.NewPCG(seed, 0))
	// A few tool-list sizes, each one SDK server shared by many paths.
	sizes := []int{1, 3, 8, 20, 60}
	handlers := make([]http.Handler, len(sizes))
	for i, k := range sizes {
		s := mcp.NewServer(&mcp.Implementation{Name: "fleet", Version: "1"}, nil)
		for j := range k {
			s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%d", j), Description: "reads a file and returns it",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"api_key":{"type":"string"}}}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
		}
		handlers[i] = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	}
	type server struct {
		h    http.Handler
		hang bool
	}
	byPath := map[string]server{}
	var ports []int
	for h := range hosts {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.%d.%d:0", 1+h/250, 1+h%250))
		if err != nil {
			return nil, err
		}
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s, ok := byPath[r.Host+r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			if s.hang {
				select {
				case <-r.Context().Done():
				case <-fl.stop:
				}
				return
			}
			// A Pareto delay: most answers quick, a heavy tail of slow ones.
			d := time.Duration(float64(latMin) / math.Pow(1-rand.Float64(), 1/alpha))
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
			s.h.ServeHTTP(w, r)
		})}
		fl.srvs = append(fl.srvs, srv)
		go srv.Serve(ln)
	}
	for i := range n {
		h := i % hosts
		host := fmt.Sprintf("127.0.%d.%d:%d", 1+h/250, 1+h%250, ports[h])
		path := fmt.Sprintf("/s%d/mcp", i)
		s := server{h: handlers[rng.IntN(len(handlers))], hang: rng.Float64() < hang}
		byPath[host+path] = s
		u := "http://" + host + path
		fl.urls = append(fl.urls, u)
		if s.hang {
			fl.hanging[u] = true
		}
	}
	return fl, nil
}

func (fl *fleet) close() {
	close(fl.stop)
	for _, s := range fl.srvs {
		s.Close()
	}
}

// slotShare is the share of the summed elapsed_ms of a release's servers
// that went to the hanging ones.
func (fl *fleet) slotShare(name string) float64 {
	f, err := os.Open(name)
	check(err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	check(err)
	dec := json.NewDecoder(zr)
	var all, hung float64
	for {
		var rec struct {
			ServerID  string `json:"server_id"`
			ElapsedMS int64  `json:"elapsed_ms"`
		}
		if err := dec.Decode(&rec); err == io.EOF {
			break
		} else {
			check(err)
		}
		all += float64(rec.ElapsedMS)
		if fl.hanging[rec.ServerID] {
			hung += float64(rec.ElapsedMS)
		}
	}
	if all == 0 {
		return 0
	}
	return hung / all
}
