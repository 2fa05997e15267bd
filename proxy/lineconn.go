package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errBadLine is what lineConn.Read returns for a line that is not a
// JSON-RPC message: the session goes on with the next line.
var errBadLine = errors.New("a line that is not a JSON-RPC message")

// lineConn is newline-delimited JSON-RPC over a reader and a writer, as an
// mcp.Connection: the proxy's stdio downstream, and its stdio upstream's
// pipes. The SDK's own ends a session at the first line that does not
// decode and caps a line at 16 MiB; a relay answers a bad client line
// with a parse error and goes on, and takes the lines HTTP upstreams may
// send (maxLine).
type lineConn struct {
	r io.ReadCloser
	w io.WriteCloser
	// answerBad, when set, answers a bad line with a JSON-RPC parse error
	// (the downstream's peer is a client that is owed an answer).
	answerBad bool
	// onClose, when set, runs after the pipes are closed (the upstream
	// process is ended there).
	onClose func() error

	lines  chan lineOrErr
	queue  []jsonrpc.Message // the rest of a batch
	wmu    sync.Mutex
	once   sync.Once
	closed chan struct{}
	done   chan struct{} // closed when the reading goroutine has returned
}

type lineOrErr struct {
	line []byte
	err  error
}

func newLineConn(r io.ReadCloser, w io.WriteCloser, maxLine int64, answerBad bool, onClose func() error) *lineConn {
	c := &lineConn{r: r, w: w, answerBad: answerBad, onClose: onClose,
		lines: make(chan lineOrErr), closed: make(chan struct{}), done: make(chan struct{})}
	go c.readLoop(maxLine)
	return c
}

// readLoop reads lines until the reader ends or fails. A line longer than
// maxLine is an error that ends the connection: its end cannot be found
// without holding it.
func (c *lineConn) readLoop(maxLine int64) {
	defer close(c.done)
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		line, err := readLine(br, maxLine)
		if err == nil && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			err = fmt.Errorf("reading a line: %w", err)
		}
		select {
		case c.lines <- lineOrErr{line, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// SessionID implements mcp.Connection.
func (c *lineConn) SessionID() string { return "" }

// Read implements mcp.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	var l lineOrErr
	select {
	case l = <-c.lines:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	}
	if l.err != nil {
		return nil, l.err
	}
	msgs, err := decodeLine(l.line)
	if err != nil {
		if c.answerBad {
			c.Write(ctx, errorResponse(jsonrpc.ID{}, CodeParse, "parse error: "+err.Error(), nil))
		}
		return nil, fmt.Errorf("%w: %v", errBadLine, err)
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// decodeLine decodes one message or a batch of them.
func decodeLine(line []byte) ([]jsonrpc.Message, error) {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(line, &raws); err != nil {
			return nil, err
		}
		if len(raws) == 0 {
			return nil, errors.New("empty batch")
		}
		msgs := make([]jsonrpc.Message, 0, len(raws))
		for _, raw := range raws {
			m, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, m)
		}
		return msgs, nil
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, err
	}
	return []jsonrpc.Message{m}, nil
}

// Write implements mcp.Connection.
func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// Close implements mcp.Connection. It closes the reader and the writer
// (and runs onClose), then waits for the reading goroutine to return: a
// reader whose Read does not end when it is closed (one that is no
// io.Closer of its own) holds Close until its Read returns.
func (c *lineConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		c.wmu.Lock()
		err = c.w.Close()
		c.wmu.Unlock()
		err = errors.Join(err, c.r.Close())
		if c.onClose != nil {
			err = errors.Join(err, c.onClose())
		}
	})
	<-c.done
	return err
}

// startCommand starts a stdio server and connects to it: closing the
// connection closes its stdin, then signals it (SIGTERM) after
// terminateAfter and kills it after as long again, and waits for it.
func startCommand(cmd *exec.Cmd, maxLine int64, terminateAfter time.Duration) (*lineConn, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	waitOnce := sync.OnceFunc(func() { go func() { exited <- cmd.Wait() }() })
	end := func() error {
		waitOnce()
		select {
		case <-exited:
			return nil
		case <-time.After(terminateAfter):
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			return nil
		case <-time.After(terminateAfter):
		}
		cmd.Process.Kill()
		<-exited
		return nil
	}
	// stdout is not closed by the connection (Wait closes it once the
	// process has exited): closing it first could kill a server that
	// still writes with SIGPIPE before it has seen its stdin end.
	return newLineConn(io.NopCloser(stdout), stdin, maxLine, false, end), nil
}
