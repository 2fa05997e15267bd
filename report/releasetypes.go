package report

import "github.com/atlas-reproduce/atlas-reproduce/internal/release"

// The model of a crawl release's release.json, as Report.Release carries
// it. It lives in internal/release, which the writers (crawl, synth) and
// readers (pipeline, tooldiff) share with the file names and hashing of a
// release; these aliases let a caller of this package name every type of
// it, while internal/release keeps the writing to itself.
type (
	// Release is release.json: how a census release was crawled.
	Release = release.Release
	// ReleaseTool names the build that crawled.
	ReleaseTool = release.Tool
	// ReleaseOptions are the crawl's options as release.json records them.
	ReleaseOptions = release.Options
	// ReleaseClient is what the crawler declared in MCP initialize.
	ReleaseClient = release.Client
	// ReleaseSource is where a crawl's candidates came from.
	ReleaseSource = release.Source
	// ReleaseCounts are a crawl's counts.
	ReleaseCounts = release.Counts
	// ProtocolCount is the number of servers at one protocol version and
	// generation.
	ProtocolCount = release.ProtocolCount
	// KindCount is one error_kind and its count.
	KindCount = release.KindCount
)
