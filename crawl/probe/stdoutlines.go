package probe

import (
	"bufio"
	"bytes"
	"io"
)

// messageLines passes a stdio server's output to the MCP session line by
// line, leaving out every line that cannot begin a JSON-RPC message: a
// banner such as "Server started on stdio" that some servers print before
// they speak MCP. The TypeScript SDK's stdio client drops such a line
// (reporting it to onerror) and goes on, so clients run these servers;
// the Go SDK's would end the session on it. A line is judged by its first
// byte that is not white space: "{" or "[" begins a message and passes
// whole, as it came, however long (the session's own line limit and
// decoder still judge it); a blank line passes; anything else is dropped
// and counted. A line is never held whole in memory here.
type messageLines struct {
	r       *bufio.Reader
	pending []byte
	buf     []byte
	err     error
	midLine bool // the next chunk continues a line already judged
	keep    bool // the line being read passes
	// Skipped counts the lines left out.
	Skipped int
}

func newMessageLines(r io.Reader) *messageLines {
	return &messageLines{r: bufio.NewReaderSize(r, 64<<10)}
}

// Read implements io.Reader.
func (m *messageLines) Read(p []byte) (int, error) {
	for {
		if len(m.pending) > 0 {
			n := copy(p, m.pending)
			m.pending = m.pending[n:]
			return n, nil
		}
		if m.err != nil {
			return 0, m.err
		}
		chunk, err := m.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			err = nil
		} else if err != nil {
			m.err = err
		}
		if len(chunk) == 0 {
			continue
		}
		if !m.midLine {
			m.keep = beginsMessage(chunk)
			if !m.keep {
				m.Skipped++
			}
		}
		m.midLine = chunk[len(chunk)-1] != '\n'
		if m.keep {
			// ReadSlice's bytes last only until the next read.
			m.buf = append(m.buf[:0], chunk...)
			m.pending = m.buf
		}
	}
}

// beginsMessage says whether a line whose first bytes are b may be a
// JSON-RPC message (or is blank).
func beginsMessage(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) == 0 || t[0] == '{' || t[0] == '['
}
