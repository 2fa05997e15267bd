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

// TestSettledNPMError: npm failures the same install meets again while
// the registry answers the same are settled; the machine's and the
// network's are not.
func TestSettledNPMError(t *testing.T) {
	for _, c := range []struct {
		stderr  string
		refused bool
		settled bool
	}{
		{"npm error code E404\nnpm error 404 Not Found - GET http://127.0.0.1/tiny-nowhere\n", false, true},
		{"npm error code ETARGET\nnpm error notarget No matching version found for x@^9.\n", false, true},
		{"npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree\n", false, true},
		{"npm ERR! code EUNSUPPORTEDPROTOCOL\n", false, true},
		// A dependency outside the registry, refused by the crawl's proxy.
		{"npm error code E403\nnpm error 403 403 Forbidden - GET https://codeload.github.com/x/y/tar.gz/z\n", true, true},
		{"npm error code E403\nnpm error 403 Forbidden - GET https://registry.example/x\n", false, false},
		{"npm error code ECONNRESET\nnpm error network aborted\n", false, false},
		{"npm error code ETIMEDOUT\n", false, false},
		{"npm error code E500\n", false, false},
		{"Killed\n", false, false},
		{"some text\nnpm error code E404 in the middle of a line\n", false, false},
	} {
		if got := settledNPMError(c.stderr, c.refused); got != c.settled {
			t.Errorf("%q (refused %v): settled %v, want %v", c.stderr, c.refused, got, c.settled)
		}
	}
}
