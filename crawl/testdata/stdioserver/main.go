// Command stdioserver is a tiny MCP server over stdio, with no dependency,
// that the package tests build as a static binary and put in an image or
// a bundle. Its tools are "echo" and notes of what it found where it runs:
// its user id, arguments, working folder, a variable, whether it can
// write to / and reach the address NET_ADDR names.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	notes := []string{"uid_" + strconv.Itoa(os.Getuid()), "argv_" + strings.Join(os.Args[1:], "_"), "mode_" + os.Getenv("MODE")}
	if wd, err := os.Getwd(); err == nil {
		notes = append(notes, "cwd_"+strings.ReplaceAll(wd, "/", "."))
	}
	notes = append(notes, "rootwrite_"+code(os.WriteFile("/written", []byte("x"), 0o644)))
	_, err := os.Stat("/usr/bin/setpriv")
	notes = append(notes, "hostusr_"+code(err))
	if a := os.Getenv("NET_ADDR"); a != "" {
		c, err := net.DialTimeout("tcp", a, 2*time.Second)
		if c != nil {
			c.Close()
		}
		notes = append(notes, "net_"+code(err))
	}
	tools := []map[string]any{{"name": "echo", "description": "echo", "inputSchema": map[string]any{"type": "object"}}}
	for _, n := range notes {
		tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "stdioserver", "version": "1.0.0"}}
		case "tools/list":
			result = map[string]any{"tools": tools}
		default:
			out.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "no such method"}})
			continue
		}
		out.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}
}

// code names an error by its errno, "ok" for none.
func code(err error) string {
	var en syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &en):
		return strings.ToUpper(strings.ReplaceAll(en.Error(), " ", "-"))
	}
	return "error"
}
