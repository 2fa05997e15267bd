package reclaim

import (
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

// TestRequest: a request reclaims; requests within the interval after it
// come to one more reclaim once the interval is over; Stop ends the
// goroutine. The bubble's clock is fake, so no test time is spent waiting.
func TestRequest(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name     string
		requests int
		wait     time.Duration
		want     int
	}{
		{"none", 0, 0, 0},
		{"one", 1, 0, 1},
		{"a burst, stopped within the interval", 5, 0, 1},
		{"a burst, the interval passed", 5, 2 * time.Second, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				r := start(time.Second, func() { n++ })
				for range tc.requests {
					r.Request()
					synctest.Wait()
				}
				time.Sleep(tc.wait)
				synctest.Wait()
				r.Stop()
				if n != tc.want {
					t.Errorf("%d requests: %d reclaims, want %d", tc.requests, n, tc.want)
				}
			})
		})
	}
}
