package census

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// LineReader reads a stream line by line as the reference reads census
// files: split on '\n' only (not on a bare '\r'), a final line without '\n'
// counted, and a line longer than the buffer gathered whole.
type LineReader struct {
	br   *bufio.Reader
	long []byte
	n    int64
}

// NewLineReader returns a LineReader over r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 1<<20)}
}

// Line is the 1-based number of the line Next last returned.
func (l *LineReader) Line() int64 { return l.n }

// Next returns the next line without its '\n', valid until the next call,
// or io.EOF after the last line.
func (l *LineReader) Next() ([]byte, error) {
	text, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], text...)
		for errors.Is(err, bufio.ErrBufferFull) {
			text, err = l.br.ReadSlice('\n')
			l.long = append(l.long, text...)
		}
		text = l.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(text) == 0 {
		return nil, io.EOF
	}
	l.n++
	return bytes.TrimSuffix(text, []byte{'\n'}), nil
}
