package probe_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/internal/crawltest"
	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// TestSilentServerCostsOneWait: a server that sends no byte of an answer
// holds its slot for the discover share of the deadline only (on the
// bubble's clock, not the wall's), and is recorded the same fixed way; a
// server that sends its HTTP status but never the JSON-RPC answer is
// still asked by initialize, and the whole deadline passes during it.
func TestSilentServerCostsOneWait(t *testing.T) {
	const timeout = 30 * time.Second
	for _, tc := range []struct {
		name    string
		handler func(stop <-chan struct{}) http.Handler
		step    string
		msg     string
		elapsed time.Duration
	}{
		{"silent", crawltest.Hanging, probe.MethodDiscover, "no answer within 10s (during server/discover)", timeout / 3},
		{"status line, then nothing", statusThenNothing, "initialize", "no complete answer within 30s (during initialize)", timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := crawltest.NewPipeNet(t)
				u := n.Serve(tc.handler(n.Stop()))
				p := probe.NewProber(n.Probe(timeout))
				defer p.Close()
				start := time.Now()
				r := p.Probe(context.Background(), crawltest.MustURL(t, u))
				if took := time.Since(start); took != tc.elapsed {
					t.Errorf("the probe held its slot %v on the bubble's clock, want %v", took, tc.elapsed)
				}
				if r.Reachable || r.ErrorKind != probe.KindTimeout || r.FailedStep != tc.step || r.Error != tc.msg {
					t.Errorf("got %s at %q: %q; want timeout at %q: %q", r.ErrorKind, r.FailedStep, r.Error, tc.step, tc.msg)
				}
			})
		})
	}
}

// statusThenNothing sends 200 and the event-stream headers to every POST,
// then nothing more until the test ends.
func statusThenNothing(stop <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})
}
