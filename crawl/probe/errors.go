package probe

import (
	"errors"
	"fmt"
)

// Error kinds of an unreachable server.
const (
	KindURL          = "url"            // the candidate is not an http(s) URL
	KindBlocked      = "blocked"        // an address the address policy refuses
	KindTimeout      = "timeout"        // the deadline passed
	KindConnect      = "connect"        // no TCP/TLS connection, or it was reset
	KindHTTPStatus   = "http_status"    // an HTTP error status
	KindAuthRequired = "auth_required"  // 401, or 403 with WWW-Authenticate
	KindRedirect     = "redirect"       // a redirect that is not followed
	KindTooManyBytes = "too_many_bytes" // the byte cap was reached
	KindTooManyTools = "too_many_tools" // the tool cap was reached
	KindTooManyPages = "too_many_pages" // the page cap was reached
	KindCursorLoop   = "cursor_loop"    // a nextCursor seen before
	KindInvalidJSON  = "invalid_json"   // a response that is not JSON
	KindRPCError     = "rpc_error"      // a JSON-RPC error answer
	KindProtocol     = "protocol"       // anything else the protocol forbids
	KindInvalidTools = "invalid_tools"  // tools the census decoder cannot read
)

// Error is the failure of one stage of a probe. Its Kind is decided
// where the failure is seen (the dialer, the HTTP layer, the page parser,
// the caps), never worked out afterwards from an error's text: the SDK
// flattens many errors with %v, and text changes between its releases.
type Error struct {
	// Kind is one of the Kind constants.
	Kind string
	// Stage names what the probe was doing: "initialize", "tools/list
	// page 3", "GET", "POST", ...
	Stage string
	// Err is the underlying failure.
	Err error
}

func (e *Error) Error() string {
	if e.Stage == "" {
		return e.Err.Error()
	}
	return e.Stage + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

func probeErr(kind, stage string, err error) *Error {
	return &Error{Kind: kind, Stage: stage, Err: err}
}

func probeErrf(kind, stage, format string, args ...any) *Error {
	return &Error{Kind: kind, Stage: stage, Err: fmt.Errorf(format, args...)}
}

// asProbeError returns the first Error in err's chain, or nil.
func asProbeError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

// TransportStdio is the transport of a packaged server run as a process.
const TransportStdio = "stdio"

// Error kinds of a packaged server.
const (
	KindNoRuntime   = "no_runtime"   // no runner on this machine for its registry type or transport
	KindInstall     = "install"      // the package could not be installed
	KindExited      = "exited"       // the process ended before the listing was done
	KindNeedsConfig = "needs_config" // required variables or arguments without default, and it did not start without them
	KindNoSandbox   = "no_sandbox"   // this machine has no working sandbox (the record says what is missing)
	KindMemory      = "memory"       // the sandbox's processes together passed its memory bound
)
