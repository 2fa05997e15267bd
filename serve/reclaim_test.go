package serve

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestReclaimHook: Config.Reclaim is called once the last request holding
// a body of reclaimAbove bytes or more ends, and not for a small body.
func TestReclaimHook(t *testing.T) {
	tests := []struct {
		name  string
		body  int
		calls bool
	}{
		{"small body", 100, false},
		{"large body", 2 * reclaimAbove, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			called := make(chan struct{}, 1)
			_, base := testServer(t, Config{MaxBody: 4 * reclaimAbove, Reclaim: func() {
				select {
				case called <- struct{}{}:
				default:
				}
			}})
			body := `{"name": "t", "inputSchema": {"description": "` + strings.Repeat("x", tc.body) + `"}}`
			resp, err := http.Post(base+"/v1/classify", "application/json", bytes.NewReader([]byte(body)))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if tc.calls {
				<-called // the request's end calls it; the test's timeout bounds the wait
				return
			}
			// A small body never counts as large, so no call can be on
			// its way.
			select {
			case <-called:
				t.Error("Reclaim called for a small body")
			default:
			}
		})
	}
}
