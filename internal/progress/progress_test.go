package progress

import (
	"reflect"
	"testing"
)

func TestTell(t *testing.T) {
	tests := []struct {
		name    string
		reports []Report
	}{
		{"none", nil},
		{"steps", []Report{{Task: "a", Done: 1, Total: 3}, {Task: "a", Done: 3, Total: 3, Failed: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []Report
			f := Func(func(r Report) { got = append(got, r) })
			for _, r := range tc.reports {
				f.Tell(r)
				Func(nil).Tell(r) // a nil Func is told nothing and does not panic
			}
			if !reflect.DeepEqual(got, tc.reports) {
				t.Errorf("told %v, want %v", got, tc.reports)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}} {
		if got := Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
