package httpserve

import "testing"

func TestMaxInFlight(t *testing.T) {
	tests := []struct {
		given, maxBody, want int64
	}{
		{0, 1000, 4000},    // unset: the default
		{-1, 1000, 4000},   // negative: the default
		{999, 1000, 4000},  // no room for one largest body: the default
		{1000, 1000, 1000}, // room for exactly one: kept
		{5000, 1000, 5000}, // more: kept
		{0, 1 << 20, 4 << 20},
	}
	for _, tc := range tests {
		if got := MaxInFlight(tc.given, tc.maxBody); got != tc.want {
			t.Errorf("MaxInFlight(%d, %d) = %d, want %d", tc.given, tc.maxBody, got, tc.want)
		}
	}
}
