package fetch

import (
	"testing"
	"time"
)

// TestOptionsZeroMeansDefault holds fetch to the project's rule: a zero or
// negative Retries or Timeout is the default, and only NoRetries and
// NoTimeout turn them off.
func TestOptionsZeroMeansDefault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		retries int
		timeout time.Duration
	}{
		{"zero", Options{}, DefaultRetries, DefaultTimeout},
		{"negative", Options{Retries: -1, Timeout: -1}, DefaultRetries, DefaultTimeout},
		{"set", Options{Retries: 2, Timeout: time.Second}, 2, time.Second},
		{"off", Options{NoRetries: true, NoTimeout: true}, 0, 0},
		{"off wins", Options{Retries: 3, Timeout: time.Second, NoRetries: true, NoTimeout: true}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newClient(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.retries != tc.retries || c.timeout != tc.timeout {
				t.Errorf("retries %d timeout %v, want %d %v", c.retries, c.timeout, tc.retries, tc.timeout)
			}
		})
	}
}
