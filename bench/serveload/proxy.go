package main

// The proxy's hostile loads (--proxy): each against its own
// `atlas-reproduce proxy` process in front of an upstream written here,
// whose peak RSS (VmHWM) is printed as for serve.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tinyTools is a tools/list result of about size bytes: tools of about
// 1 MiB each, every one an input schema of as many empty properties as
// fit. The labels of a tiny property weigh several times its bytes.
func tinyTools(size int) []byte {
	b := append(make([]byte, 0, size+1<<20), `{"tools":[`...)
	for t := 0; len(b) < size; t++ {
		if t > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"name":"t%d","inputSchema":{"type":"object","properties":{`, t)
		start := len(b)
		for i := 0; len(b)-start < 1<<20 && len(b) < size; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = strconv.AppendInt(b, int64(i), 36)
			b = append(b, `":{}`...)
		}
		b = append(b, "}}}"...)
	}
	return append(b, "]}"...)
}

// proxyUpstream is a Streamable HTTP MCP server on loopback: at
// /list/NAME its tools/list answers lists[NAME]; at /notify a tools/call
// is answered by an event stream of n notifications of size bytes each
// before its result, which a client without a standalone stream cannot
// take (the proxy holds them for it).
func proxyUpstream(lists map[string][]byte, notifyN, notifySize int) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	note := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%s"}}`, strings.Repeat("x", notifySize))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		}
		body, _ := io.ReadAll(r.Body)
		id := regexp.MustCompile(`"id"\s*:\s*("[^"]*"|\d+)`).FindSubmatch(body)
		method := regexp.MustCompile(`"method"\s*:\s*"([^"]*)"`).FindSubmatch(body)
		if id == nil || method == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Mcp-Session-Id", "load")
		switch string(method[1]) {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"load","version":"1"}}}`, id[1])
		case "tools/list":
			list := lists[strings.TrimPrefix(r.URL.Path, "/list/")]
			if list == nil {
				list = []byte(`{"tools":[]}`)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":`, id[1])
			w.Write(list)
			io.WriteString(w, "}")
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			for range notifyN {
				io.WriteString(w, "event: message\ndata: ")
				w.Write(note)
				io.WriteString(w, "\n\n")
			}
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", id[1])
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id[1])
		}
	})}
	go srv.Serve(ln)
	return ln.Addr().String(), func() { srv.Close() }, nil
}

// startProxy starts `atlas-reproduce proxy` in front of upstream.
func startProxy(binary, upstream string) (*exec.Cmd, string, error) {
	cmd := exec.Command(binary, "proxy", "--listen", "127.0.0.1:0", "--upstream", upstream, "--quiet")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := regexp.MustCompile(`serving on http://(\S+)/mcp`).FindStringSubmatch(line)
	if err != nil || m == nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, "", fmt.Errorf("proxy did not start: %q %v", line, err)
	}
	go io.Copy(io.Discard, stderr)
	return cmd, m[1], nil
}

// mcpSession initializes a session at the proxy and returns its id.
func mcpSession(addr string) (string, error) {
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: HTTP %d", resp.StatusCode)
	}
	_, err = mcpPost(addr, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid, err
}

// mcpPost posts one message in the session and says what came back.
func mcpPost(addr, sid, body string) (string, error) {
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return fmt.Sprintf("%d, %d bytes", resp.StatusCode, n), err
}

// sessionCall opens a session and sends one request in it.
func sessionCall(addr, body string) string {
	sid, err := mcpSession(addr)
	if err != nil {
		return err.Error()
	}
	out, err := mcpPost(addr, sid, body)
	if err != nil {
		return out + ": " + err.Error()
	}
	return out
}

// mcpHolders is holders on the proxy's /mcp, with no session.
func mcpHolders(addr string, n, size int) string {
	body := bytes.Repeat([]byte(" "), size-1)
	var wg sync.WaitGroup
	sent := make([]int, n)
	conns := make([]net.Conn, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			conns[i] = c
			io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n")
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
	full := 0
	for i, c := range conns {
		if c != nil {
			defer c.Close()
		}
		if sent[i] == len(body) {
			full++
		}
	}
	return fmt.Sprintf("%d of %d sent all but the last byte", full, n)
}

// runProxyMemory runs each of the proxy's hostile loads against its own
// proxy process and prints its peak RSS.
func runProxyMemory(binary string, ceiling int64, settle time.Duration, only string) error {
	lists := map[string][]byte{"63m": tinyTools(63 << 20), "11m": tinyTools(11 << 20)}
	up, stopUp, err := proxyUpstream(lists, 10, 60<<20)
	if err != nil {
		return err
	}
	defer stopUp()
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	loads := []struct {
		name, path string
		run        func(addr string) string
	}{
		{"150 connections each holding 8 MiB-1 of body, no session", "/list/none", func(addr string) string { return mcpHolders(addr, 150, 8<<20) }},
		{"tools/list of 63 MiB: 5.6 M tiny properties", "/list/63m", func(addr string) string { return sessionCall(addr, list) }},
		{"tools/list of 11 MiB: 1 M tiny properties", "/list/11m", func(addr string) string { return sessionCall(addr, list) }},
		{"10 notifications of 60 MB for a client with no standalone stream", "/notify", func(addr string) string {
			return sessionCall(addr, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{}}}`)
		}},
	}
	fmt.Printf("%s: peak RSS (VmHWM) of proxy under each load; RSS %v after it\n", binary, settle)
	fmt.Printf("| load | peak RSS MiB | RSS after MiB | seconds | clients saw |\n|---|---|---|---|---|\n")
	for _, l := range loads {
		if !strings.Contains(l.name, only) {
			continue
		}
		srv, addr, err := startProxy(binary, "http://"+up+l.path)
		if err != nil {
			return err
		}
		pid := srv.Process.Pid
		killed := make(chan struct{})
		stop := watchCeiling(pid, ceiling, func() { srv.Process.Kill(); close(killed) })
		t0 := time.Now()
		seen := l.run(addr)
		elapsed := time.Since(t0)
		time.Sleep(settle)
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
