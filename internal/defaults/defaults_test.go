package defaults

import (
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
