package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// lineHandler writes a command's log records as the plain lines a person
// reads on a terminal: the message, then any attributes as key=value, with
// "warning: " or "error: " before a record of that level. The packages'
// messages already say which command and file they are about, so a time
// and an INFO level on every line would be noise; a program that wants
// structured records can wrap the packages' *slog.Logger itself.
type lineHandler struct {
	w     io.Writer
	mu    *sync.Mutex
	level slog.Leveler
	pre   []byte // the attributes of WithAttrs, written already
	group string
}

func newLineHandler(w io.Writer, level slog.Leveler) *lineHandler {
	return &lineHandler{w: w, mu: new(sync.Mutex), level: level}
}

// Enabled reports whether a record of level l is written.
func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

// Handle writes r as one line.
func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b bytes.Buffer
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(r.Message)
	b.Write(h.pre)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b.Bytes())
	return err
}

// WithAttrs returns a handler that writes attrs on every line.
func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	b := bytes.NewBuffer(append([]byte(nil), h.pre...))
	for _, a := range attrs {
		appendAttr(b, h.group, a)
	}
	h2.pre = b.Bytes()
	return &h2
}

// WithGroup returns a handler that prefixes later keys with name.
func (h *lineHandler) WithGroup(name string) slog.Handler {
	h2 := *h
	if h.group != "" {
		name = h.group + "." + name
	}
	h2.group = name
	return &h2
}

// appendAttr writes " key=value", quoting a value that holds a space, a
// quote or a control character, as slog's text handler does.
func appendAttr(b *bytes.Buffer, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		g := a.Key
		if group != "" {
			g = group + "." + g
		}
		for _, ga := range a.Value.Group() {
			appendAttr(b, g, ga)
		}
		return
	}
	b.WriteByte(' ')
	if group != "" {
		b.WriteString(group)
		b.WriteByte('.')
	}
	b.WriteString(a.Key)
	b.WriteByte('=')
	v := a.Value.String()
	if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == '"' || r == '=' || !strconv.IsPrint(r) }) {
		v = strconv.Quote(v)
	}
	b.WriteString(v)
}
