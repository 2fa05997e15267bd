package main

import (
	"bytes"
	"log/slog"
	"testing"
)

func TestLineHandler(t *testing.T) {
	cases := []struct {
		name string
		log  func(*slog.Logger)
		want string
	}{
		{"info is the message alone", func(l *slog.Logger) { l.Info("run: 3 tools") }, "run: 3 tools\n"},
		{"warning", func(l *slog.Logger) { l.Warn("slow") }, "warning: slow\n"},
		{"error", func(l *slog.Logger) { l.Error("gone") }, "error: gone\n"},
		{"below the level", func(l *slog.Logger) { l.Debug("hidden") }, ""},
		{"attributes", func(l *slog.Logger) { l.Info("m", "n", 3, "file", "a b", "empty", "") }, "m n=3 file=\"a b\" empty=\"\"\n"},
		{"a control character is quoted", func(l *slog.Logger) { l.Info("m", "name", "x\x1b]0;t") }, "m name=\"x\\x1b]0;t\"\n"},
		{"with and groups", func(l *slog.Logger) { l.With("s", "1").WithGroup("g").Info("m", "k", "v") }, "m s=1 g.k=v\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			c.log(slog.New(newLineHandler(&b, slog.LevelInfo)))
			if b.String() != c.want {
				t.Errorf("got %q, want %q", b.String(), c.want)
			}
		})
	}
}
