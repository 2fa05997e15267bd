package crawltest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
)

// ProbeOnce probes rawURL once with opt (a minute and the Loopback
// policy by default) and returns what the probe found.
func ProbeOnce(t *testing.T, opt probe.Options, rawURL string) probe.Result {
	t.Helper()
	if opt.Timeout == 0 {
		opt.Timeout = 60 * time.Second
	}
	if opt.AllowAddr == nil {
		opt.AllowAddr = Loopback
	}
	p := probe.NewProber(opt)
	defer p.Close()
	return p.Probe(context.Background(), MustURL(t, rawURL))
}

// BigTools are 5,000 tools whose tools/list answer is about 21 MB: past
// the SDK's 16 MiB cap on one server-sent event.
func BigTools() []Tool {
	tools := GenTools(5000, "big")
	for i := range tools {
		tools[i].Description = strings.Repeat(fmt.Sprintf("tool %04d reads a file path. ", i), 200)[:4200]
	}
	return tools
}

// MustURL is the URL to probe of s, normalised.
func MustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	_, u, err := probe.Normalise(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Loopback is the tests' address policy: their servers listen on
// 127.0.0.1, and every other address stands for one off limits.
func Loopback(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }

// FastProbe are bounds that make the hostile cases fail fast.
var FastProbe = probe.Options{Timeout: 300 * time.Millisecond, MaxPages: 30, MaxTools: 3000, MaxBytes: 4 << 20, AllowAddr: Loopback}

// NameAndSchema are what the census reads of a tool: its name and input
// schema, decoded.
func NameAndSchema(t *testing.T, raw json.RawMessage) [2]any {
	var tl struct {
		Name        any `json:"name"`
		InputSchema any `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &tl); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return [2]any{tl.Name, tl.InputSchema}
}

// Probe is probe.Options for n's servers: its own transport, with
// timeout as the deadline, and FastProbe's caps.
func (n *PipeNet) Probe(timeout time.Duration) probe.Options {
	return probe.Options{Timeout: timeout, MaxPages: FastProbe.MaxPages, MaxTools: FastProbe.MaxTools, MaxBytes: FastProbe.MaxBytes, Transport: n.tr}
}
