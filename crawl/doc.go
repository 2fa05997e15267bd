// Package crawl makes a census release: it speaks MCP as a client to every
// candidate server, through the official Go SDK, and writes what they answer
// in the frozen snapshot's layout (server_tools.jsonl.gz, servers.jsonl.gz,
// candidates_remotes.jsonl, SHA256SUMS), which `run` then reads as it reads
// the snapshot.
//
// The stages are: candidates, read from a file or from the MCP Registry's
// list API (FetchRegistry), and normalised; probes on a bounded pool
// with a per-host limit and one deadline per server; a journal of finished
// candidates, appended and synced, from which an interrupted crawl resumes;
// and an ordered writer that emits the final files in candidate order under
// temporary names and renames them only when every candidate is finished.
//
// A server's failure is data, never an error of the crawl: it becomes an
// unreachable record with the kind and text of its error, the step that
// failed and the JSON-RPC error the server answered it with.
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
package crawl
