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
//
// The SDK ends the session, dropping the answers still being computed, as
// soon as its reader returns io.EOF; a client that writes its requests and
// closes stdin (`printf ... | atlas-reproduce serve --stdio`) would lose
// the last answers. So lineFilter holds back the end of input until every
// request it passed on has been answered (inflight); the returned stop
// releases it once the session is over for any other reason.
func (s *Server) stdioTransport(r io.Reader, w io.Writer) (t mcp.Transport, stop func()) {
	track := newInflight()
	sw := &syncWriter{w: w, track: track}
	f := &lineFilter{br: bufio.NewReaderSize(r, 64<<10), out: sw, max: s.cfg.MaxBody, track: track}
	return &mcp.IOTransport{Reader: io.NopCloser(f), Writer: nopWriteCloser{sw}, MaxLineLength: int(s.cfg.MaxBody) + 2}, track.stop
}

// syncWriter serialises writes: the SDK writes each message with one
// Write, and so does lineFilter, from the SDK's reading goroutine. Each
// answer written settles its request in track.
type syncWriter struct {
	mu    sync.Mutex
	w     io.Writer
	track *inflight
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.w.Write(p)
	s.mu.Unlock()
	s.track.answered(p)
	return n, err
}

// inflight counts the requests passed to the SDK and not yet answered, by
// id (normalised as jsonrpc.ID holds it: int64 or string).
type inflight struct {
	mu      sync.Mutex
	cond    *sync.Cond
	ids     map[any]int
	stopped bool
}

func newInflight() *inflight {
	t := &inflight{ids: map[any]int{}}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// requested notes the requests of one line (a message or a batch).
func (t *inflight) requested(line []byte) {
	for _, m := range decodeLine(line) {
		if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
			t.mu.Lock()
			t.ids[r.ID.Raw()]++
			t.mu.Unlock()
		}
	}
}

// answered settles the requests that the written line answers.
func (t *inflight) answered(line []byte) {
	for _, m := range decodeLine(bytes.TrimSpace(line)) {
		r, ok := m.(*jsonrpc.Response)
		if !ok || !r.ID.IsValid() {
			continue
		}
		t.mu.Lock()
		if n := t.ids[r.ID.Raw()]; n > 1 {
			t.ids[r.ID.Raw()] = n - 1
		} else if n == 1 {
			delete(t.ids, r.ID.Raw())
			if len(t.ids) == 0 {
				t.cond.Broadcast()
			}
		}
		t.mu.Unlock()
	}
}

// wait returns once no request is unanswered, or stop was called.
func (t *inflight) wait() {
	t.mu.Lock()
	for len(t.ids) > 0 && !t.stopped {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

// stop releases wait for good: the session is over.
func (t *inflight) stop() {
	t.mu.Lock()
	t.stopped = true
	t.cond.Broadcast()
	t.mu.Unlock()
}

// decodeLine decodes a message or a batch of them; what does not decode
// yields nothing.
func decodeLine(line []byte) []jsonrpc.Message {
	if len(line) == 0 {
		return nil
	}
	if line[0] != '[' {
		m, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return nil
		}
		return []jsonrpc.Message{m}
	}
	var raws []json.RawMessage
	if json.Unmarshal(line, &raws) != nil {
		return nil
	}
	var ms []jsonrpc.Message
	for _, raw := range raws {
		if m, err := jsonrpc.DecodeMessage(raw); err == nil {
			ms = append(ms, m)
		}
	}
	return ms
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
	track   *inflight
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			// The SDK drops unfinished answers at the end of input.
			f.track.wait()
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
		f.track.requested(text)
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
