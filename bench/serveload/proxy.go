package main

// The proxy's hostile loads (--proxy): each against its own
// `atlas-reproduce proxy` process in front of an upstream written here,
// whose peak RSS (VmHWM) is printed as for serve.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
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
	return startListening(binary, proxyBanner, "proxy", "--listen", "127.0.0.1:0", "--upstream", upstream, "--quiet")
}

var proxyBanner = regexp.MustCompile(`serving on http://(\S+)/mcp`)

// mcpSession initializes a session at the proxy and returns its id.
func mcpSession(addr string) (string, error) {
	resp, err := mcpRequest(addr, "",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)
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
	resp, err := mcpRequest(addr, sid, body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return fmt.Sprintf("%d, %d bytes", resp.StatusCode, n), err
}

// mcpRequest posts body to the proxy's /mcp as a Streamable HTTP client
// does: in session sid, with its protocol version, unless sid is empty
// (the initialize that opens one).
func mcpRequest(addr, sid, body string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return http.DefaultClient.Do(req)
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
	full, _ := holdBodies(addr, "/mcp", "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", n, size)
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
	loads := []memLoad{
		{"150 connections each holding 8 MiB-1 of body, no session", "/list/none", func(addr string) string { return mcpHolders(addr, 150, 8<<20) }},
		{"tools/list of 63 MiB: 5.6 M tiny properties", "/list/63m", func(addr string) string { return sessionCall(addr, list) }},
		{"tools/list of 11 MiB: 1 M tiny properties", "/list/11m", func(addr string) string { return sessionCall(addr, list) }},
		{"10 notifications of 60 MB for a client with no standalone stream", "/notify", func(addr string) string {
			return sessionCall(addr, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{}}}`)
		}},
	}
	start := func(l memLoad) (*exec.Cmd, string, error) { return startProxy(binary, "http://"+up+l.upstream) }
	return measureLoads(binary, "proxy", loads, start, ceiling, settle, only)
}
