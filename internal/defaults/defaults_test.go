package defaults

import (
	"bytes"
	"log/slog"
	"testing"
	"time"
)

func TestSet(t *testing.T) {
	t.Run("int", func(t *testing.T) {
		for _, tc := range []struct{ in, want int }{{0, 7}, {-3, 7}, {1, 1}, {9, 9}} {
			v := tc.in
			Set(&v, 7)
			if v != tc.want {
				t.Errorf("Set(%d, 7) = %d, want %d", tc.in, v, tc.want)
			}
		}
	})
	t.Run("duration", func(t *testing.T) {
		for _, tc := range []struct{ in, want time.Duration }{{0, time.Second}, {-time.Nanosecond, time.Second}, {time.Millisecond, time.Millisecond}} {
			v := tc.in
			Set(&v, time.Second)
			if v != tc.want {
				t.Errorf("Set(%v, 1s) = %v, want %v", tc.in, v, tc.want)
			}
		}
	})
	t.Run("string", func(t *testing.T) {
		for _, tc := range []struct{ in, want string }{{"", "d"}, {"x", "x"}, {" ", " "}} {
			v := tc.in
			Set(&v, "d")
			if v != tc.want {
				t.Errorf("Set(%q, \"d\") = %q, want %q", tc.in, v, tc.want)
			}
		}
	})
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	given := slog.New(slog.NewTextHandler(&buf, nil))
	tests := []struct {
		name    string
		in      *slog.Logger
		written bool
	}{
		{"nil discards", nil, false},
		{"a logger is kept", given, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf.Reset()
			l := Logger(tc.in)
			if l == nil {
				t.Fatal("Logger returned nil")
			}
			l.Info("hello")
			if got := buf.Len() > 0; got != tc.written {
				t.Errorf("written = %v, want %v", got, tc.written)
			}
		})
	}
}
