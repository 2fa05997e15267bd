package crawl

import (
	"context"

	"github.com/atlas-reproduce/atlas-reproduce/internal/sandbox"
)

// ScanCommand runs one stdio server that is no package, a command a
// developer's agent config names (node ./server.js, a binary in the
// repository), in the sandbox sb, and lists its tools as Probe would: the
// client of the crawl, for `scan --config`. spec says what the sandbox
// shows; it never has the network, whatever spec says. The result says
// how the server answered or why it did not; a failure to start the
// sandbox is a result of kind exited, as for a packaged server.
func ScanCommand(ctx context.Context, sb *sandbox.Sandbox, spec sandbox.Spec, opt ProbeOptions) Result {
	opt.defaults()
	p := NewProber(opt)
	defer p.Close()
	spec.Network = false
	return p.probeCommand(ctx, func(ctx context.Context) *sandbox.Cmd { return sb.Command(ctx, spec) })
}
