// Package crawl makes a census release: it has every candidate server
// probed as an MCP client (crawl/probe), packaged servers installed and
// run in the sandbox first (crawl/runners), and writes what they answer
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
package crawl
