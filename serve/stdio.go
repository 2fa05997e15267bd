package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC 2.0 error codes answered by the stdio filter.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
)

// stdioTransport carries JSON-RPC over r and w, one message a line. The
// SDK's transport ends the session at the first line it cannot read; a
// server an agent started over stdio should rather answer the line, as
// JSON-RPC says (-32700 for a line that is not JSON, -32600 for one that
// is not a message or is longer than MaxBody), and read the next. So the
// lines pass through lineFilter first, which answers those itself.
func (s *Server) stdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	sw := &syncWriter{w: w}
	f := &lineFilter{br: bufio.NewReaderSize(r, 64<<10), out: sw, max: s.cfg.MaxBody}
	return &mcp.IOTransport{Reader: io.NopCloser(f), Writer: nopWriteCloser{sw}, MaxLineLength: int(s.cfg.MaxBody) + 2}
}

// syncWriter serialises writes: the SDK writes each message with one
// Write, and so does lineFilter, from the SDK's reading goroutine.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// lineFilter yields the lines of br that are JSON-RPC messages (or
// batches) and answers the others on out.
type lineFilter struct {
	br      *bufio.Reader
	out     io.Writer
	max     int64
	line    []byte // the line being gathered
	pending []byte // the rest of the line being yielded
	err     error  // br's error, returned once the pending line is out
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// next reads one line and either makes it pending or answers it.
func (f *lineFilter) next() {
	f.line = f.line[:0]
	long := false
	for {
		chunk, err := f.br.ReadSlice('\n')
		if !long && int64(len(f.line)+len(chunk)) > f.max+1 { // +1: the newline
			long, f.line = true, f.line[:0]
		}
		if !long {
			f.line = append(f.line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			f.err = err
		}
		break
	}
	if cap(f.line) > 1<<20 && len(f.line) == 0 {
		f.line = nil // one long line must not pin its buffer
	}
	switch text := bytes.TrimSpace(f.line); {
	case long:
		f.reply(rpcInvalidRequest, fmt.Sprintf("Invalid Request: message longer than %d bytes", f.max))
	case len(text) == 0:
	case !json.Valid(text):
		f.reply(rpcParseError, "Parse error: the line is not JSON")
	case text[0] != '[' && !isMessage(text):
		f.reply(rpcInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
	default:
		f.pending = append(text, '\n')
	}
}

func isMessage(text []byte) bool {
	_, err := jsonrpc.DecodeMessage(text)
	return err == nil
}

func (f *lineFilter) reply(code int, msg string) {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	f.out.Write(append(b, '\n'))
}
