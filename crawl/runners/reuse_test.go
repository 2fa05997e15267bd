package runners

import (
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// TestDecidedByServer: the outcomes a server's code decides are kept for
// reuse; those the machine can cause (a deadline passed under load, the
// crawl stopped, an install that failed) never are.
func TestDecidedByServer(t *testing.T) {
	for _, c := range []struct {
		r    probe.Result
		kept bool
	}{
		{probe.Result{Reachable: true}, true},
		{probe.Result{ErrorKind: probe.KindExited}, true},
		{probe.Result{ErrorKind: probe.KindInvalidJSON}, true},
		{probe.Result{ErrorKind: probe.KindRPCError}, true},
		{probe.Result{ErrorKind: probe.KindProtocol}, true},
		{probe.Result{ErrorKind: probe.KindTooManyBytes}, true},
		{probe.Result{ErrorKind: probe.KindMemory}, true},
		{probe.Result{ErrorKind: probe.KindTimeout}, false},
		{probe.Result{ErrorKind: probe.KindConnect}, false},
		{probe.Result{ErrorKind: probe.KindInstall}, false},
		{probe.Result{ErrorKind: probe.KindNoSandbox}, false},
		{probe.Result{ErrorKind: probe.KindNeedsConfig}, false},
	} {
		if got := decidedByServer(c.r); got != c.kept {
			t.Errorf("%+v: kept %v, want %v", c.r, got, c.kept)
		}
	}
}
