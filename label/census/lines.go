package census

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// keepLong is the largest gathered-line buffer a LineReader keeps for the
// next long line: one huge line must not pin its memory for the rest of
// the file.
const keepLong = 4 << 20

// LineReader reads a stream line by line as the reference reads census
// files: split on '\n' only (not on a bare '\r'), a final line without '\n'
// counted, and a line longer than the buffer gathered whole.
type LineReader struct {
	// MaxLine is the longest line accepted, in bytes without the '\n'
	// (default DefaultMaxLine). A longer line is read to its end
	// without being kept, and Next reports it with its length as a
	// *LineTooLongError.
	MaxLine int

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
	max := l.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	if cap(l.long) > keepLong {
		l.long = nil
	}
	text, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], text...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(l.long) > max {
				return nil, l.tooLong(int64(len(l.long)), max)
			}
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
	text = bytes.TrimSuffix(text, []byte{'\n'})
	if len(text) > max {
		return nil, &LineTooLongError{Line: l.n + 1, Size: int64(len(text)), Max: max}
	}
	l.n++
	return text, nil
}

// tooLong reads on to the end of a line of at least size bytes, to report
// its length.
func (l *LineReader) tooLong(size int64, max int) error {
	for {
		text, err := l.br.ReadSlice('\n')
		size += int64(len(text))
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		if bytes.HasSuffix(text, []byte{'\n'}) {
			size--
		}
		return &LineTooLongError{Line: l.n + 1, Size: size, Max: max}
	}
}

// DefaultMaxLine is the longest line accepted when no limit is given.
const DefaultMaxLine = 1 << 30

// LineTooLongError is a line longer than the limit. The reader reads on to
// the line's end without keeping it, so Size is the line's length.
type LineTooLongError struct {
	// Line is the line's 1-based number.
	Line int64
	// Size is its length in bytes, without the '\n'.
	Size int64
	// Max is the limit it exceeds.
	Max int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line %d is %d bytes, longer than %d", e.Line, e.Size, e.Max)
}
