package main

// The hostile loads: bodies that ask for far more memory than they weigh,
// and clients that hold bodies open. Each load runs against a fresh serve
// process, so that its VmHWM (peak resident set) is that load's alone.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// emptyTools is {"tools":[{},{},...]} of about size bytes: the most tools
// a body of that size can hold.
func emptyTools(size int) []byte {
	const head, tail = `{"tools":[`, `]}`
	n := (size - len(head) - len(tail) + 1) / 3
	b := make([]byte, 0, len(head)+3*n+len(tail))
	b = append(b, head...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "{}"...)
	}
	return append(b, tail...)
}

// denseTool is one tool of about size bytes whose input schema holds as
// many empty properties as fit: the decoder's worst case per byte.
func denseTool(size int) []byte {
	b := append(make([]byte, 0, size+64), `{"name":"t","inputSchema":{"properties":{`...)
	for i := 0; len(b) < size-32; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(i), 36)
		b = append(b, `":{}`...)
	}
	return append(b, "}}}"...)
}

// mcpCall wraps arguments in a JSON-RPC tools/call of classify_tools.
func mcpCall(args []byte) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"classify_tools","arguments":`)
	return append(append(b, args...), "}}"...)
}

// memLoad is one hostile load: run drives the server at addr and returns a
// line saying what the clients saw.
type memLoad struct {
	name string
	// upstream is, for the proxy's loads, the path of the upstream the
	// proxy relays to.
	upstream string
	run      func(addr string) string
}

func memLoads() []memLoad {
	body := emptyTools(8_000_000)
	call := mcpCall(body)
	dense := denseTool(8_000_000)
	classify := func(addr string, b []byte) func() string {
		return func() string {
			return postAll(addr, "/v1/classify", "Content-Type: application/json\r\n", b)
		}
	}
	mcp := func(addr string) func() string {
		return func() string {
			return postAll(addr, "/mcp", "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", call)
		}
	}
	return []memLoad{
		{"8 MB of 2.7 M empty tools, /v1/classify", "", func(addr string) string { return classify(addr, body)() }},
		{"four such at once, /v1/classify", "", func(addr string) string { return parallel(4, classify(addr, body)) }},
		{"8 MB of 2.7 M empty tools, /mcp", "", func(addr string) string { return mcp(addr)() }},
		{"four such at once, /mcp", "", func(addr string) string { return parallel(4, mcp(addr)) }},
		{"150 connections each holding 8 MiB-1 of body", "", func(addr string) string { return holders(addr, 150, 8<<20) }},
		{"8 MB tool of 1 M empty properties, /v1/classify", "", func(addr string) string { return classify(addr, dense)() }},
		{"four such at once, /v1/classify (dense)", "", func(addr string) string { return parallel(4, classify(addr, dense)) }},
	}
}

// runMemory runs each hostile load against its own serve process and
// prints its peak RSS, and the RSS a few seconds after the load.
func runMemory(binary string, ceiling int64, settle time.Duration, only string) error {
	start := func(memLoad) (*exec.Cmd, string, error) { return startServer(binary) }
	return measureLoads(binary, "serve", memLoads(), start, ceiling, settle, only)
}

// measureLoads runs each load whose name holds only against its own
// process, which start starts (named what in the table's title), and
// prints a table row a load: its peak RSS, and the RSS settle after it.
func measureLoads(binary, what string, loads []memLoad, start func(memLoad) (*exec.Cmd, string, error), ceiling int64, settle time.Duration, only string) error {
	fmt.Printf("%s: peak RSS (VmHWM) of %s under each load; RSS %v after it\n", binary, what, settle)
	fmt.Printf("| load | peak RSS MiB | RSS after MiB | seconds | clients saw |\n|---|---|---|---|---|\n")
	for _, l := range loads {
		if !strings.Contains(l.name, only) {
			continue
		}
		srv, addr, err := start(l)
		if err != nil {
			return err
		}
		pid := srv.Process.Pid
		killed := make(chan struct{})
		stop := watchCeiling(pid, ceiling, func() { srv.Process.Kill(); close(killed) })
		t0 := time.Now()
		seen := l.run(addr)
		elapsed := time.Since(t0)
		time.Sleep(settle) // the load is over: what does the process give back?
		stop()
		peak, after := procKB(pid, "VmHWM:"), procKB(pid, "VmRSS:")
		srv.Process.Kill()
		srv.Wait()
		peakText := fmt.Sprintf("%.0f", float64(peak)/1024)
		afterText := fmt.Sprintf("%.0f", float64(after)/1024)
		select {
		case <-killed:
			peakText, afterText = fmt.Sprintf("> %d (killed at the ceiling)", ceiling>>20), "-"
		default:
		}
		fmt.Printf("| %s | %s | %s | %.1f | %s |\n", l.name, peakText, afterText, elapsed.Seconds(), seen)
	}
	return nil
}

// watchCeiling kills the server (through kill) if its RSS passes ceiling
// bytes: the machine is shared, and the server before the memory bounds
// took gigabytes under these loads.
func watchCeiling(pid int, ceiling int64, kill func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if procKB(pid, "VmRSS:")<<10 > ceiling {
					kill()
					return
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// procKB reads a kB field of /proc/PID/status.
func procKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb
		}
	}
	return 0
}

// postAll sends the whole request before reading anything, as Python's
// urllib does, then reads the answer to its end, and says its status and
// size.
func postAll(addr, path, headers string, body []byte) string {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Minute))
	head := "POST " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n" + headers + "Connection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := conn.Write(append([]byte(head), body...)); err != nil {
		return "write: " + err.Error()
	}
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil {
		return "read: " + err.Error()
	}
	n, err := io.Copy(io.Discard, br)
	if err != nil {
		return "read: " + err.Error()
	}
	return fmt.Sprintf("%s, %d bytes", strings.TrimSpace(strings.TrimPrefix(status, "HTTP/1.1 ")), n)
}

// parallel runs f n times at once and joins what each saw, counting
// repeats.
func parallel(n int, f func() string) string {
	out := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = f() }()
	}
	wg.Wait()
	return summarise(out)
}

func summarise(out []string) string {
	count := map[string]int{}
	var order []string
	for _, s := range out {
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	var b strings.Builder
	for i, s := range order {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d× %s", count[s], s)
	}
	return b.String()
}

// holders opens n connections, each announcing a body of size bytes and
// sending all of it but the last byte, then holding it open: the server
// must not keep n bodies.
func holders(addr string, n, size int) string {
	full, total := holdBodies(addr, "/v1/classify", "Content-Type: application/json\r\n", n, size)
	return fmt.Sprintf("%d of %d sent all but the last byte; %.0f MiB sent in all", full, n, float64(total)/(1<<20))
}

// holdBodies opens n connections, each posting to path with headers a
// body announced as size bytes, all of it but the last byte, then holding
// it open. Each stops writing when the server stops reading for ten
// seconds; the peak is taken with all of them holding. It returns how many
// sent all but the last byte, and the bytes sent in all.
func holdBodies(addr, path, headers string, n, size int) (full int, total int64) {
	body := bytes.Repeat([]byte(" "), size-1)
	conns := make([]net.Conn, n)
	sent := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			conns[i] = c
			io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n"+headers+"Content-Length: "+strconv.Itoa(size)+"\r\n\r\n")
			for off := 0; off < len(body); {
				c.SetWriteDeadline(time.Now().Add(10 * time.Second))
				k, err := c.Write(body[off:min(off+1<<20, len(body))])
				off += k
				sent[i] = off
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, c := range conns {
		if c != nil {
			defer c.Close()
		}
		if sent[i] == len(body) {
			full++
		}
		total += int64(sent[i])
	}
	return full, total
}
