package runner

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader reads a stream line by line, as the census files are read:
// split on '\n' only, a final line without '\n' counted, and a line longer
// than the buffer gathered whole.
type lineReader struct {
	br   *bufio.Reader
	long []byte
	// n is the number of the line last returned.
	n int64
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<20)}
}

// next returns the next line without its '\n', valid until the next call,
// or io.EOF after the last line.
func (l *lineReader) next() ([]byte, error) {
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
