// Package probe is the crawl's MCP client: it probes one server, remote
// (Streamable HTTP, legacy SSE) or a program a runner prepared (stdio,
// through Prober.Command), through the official Go SDK, within one
// deadline, a byte cap, a memory budget and an address policy, and says
// what the server answered or why it did not, as a Result. It knows
// nothing of how a program is installed or where it runs: that is
// crawl/runners'.
//
// # Negotiation
//
// The client asks for the newest revision first: server/discover at
// 2026-07-28, the stateless generation; a server that refuses it is asked
// by initialize, on a fresh connection (see negotiate.go); a server whose
// POSTs fail with a 4xx is tried over legacy SSE. The record says which
// generation answered, at which revision, and the revisions the server
// named.
//
// # Raw tools
//
// The SDK's typed mcp.Tool keeps only the fields it knows, decodes
// inputSchema into a map (losing key order, duplicate keys and number
// literals) and fails a whole page on one tool of an unexpected type (a
// numeric name, say). The census must classify what the server sent, so the
// client captures the raw JSON-RPC result of each tools/list response on its
// way from the SDK's transport to the SDK's session, keeps every tool
// verbatim (compacted to one line, each maximal invalid UTF-8 subsequence
// replaced by one U+FFFD, as Python's errors="replace" decodes it) and
// hands the session an empty page in its place. The SDK still does
// everything else: transports, framing, sessions, the handshake.
//
// # Errors
//
// The kind of an unreachable server's error is decided where the failure
// is met, as a ProbeError: the dialer (blocked, connect), the HTTP layer
// (http_status, auth_required, redirect, too_many_bytes, a body that is
// not JSON), the page parser and the caps. The SDK reports many failures
// only as text, so nothing is worked out from an error's text.
package probe
