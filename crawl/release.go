package crawl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
)

// candidates are the crawl's candidates and where they came from: the
// list given, or the file read and its SHA-256.
func (opt *Options) candidates() ([]Candidate, release.Source, error) {
	if opt.CandidateList != nil {
		return opt.CandidateList, opt.Source, nil
	}
	b, err := os.ReadFile(opt.Candidates)
	if err != nil {
		return nil, release.Source{}, err
	}
	cands, err := ParseCandidates(bytes.NewReader(b), opt.Candidates)
	if err != nil {
		return nil, release.Source{}, err
	}
	h := sha256.Sum256(b)
	return cands, release.Source{File: opt.Candidates, SHA256: hex.EncodeToString(h[:])}, nil
}

// release is the crawl's release.json.
func (opt *Options) release(start time.Time, src release.Source, sum *Summary) *release.Release {
	bi := buildinfo.Read()
	sent, _ := Declared(context.Background()) // an in-memory exchange; it does not fail
	info, caps := sent.ClientInfo, sent.Capabilities
	byKind := sum.UnreachableByKind
	if byKind == nil {
		byKind = map[string]int{}
	}
	return &release.Release{
		Tool:       release.Tool{Name: "atlas-reproduce", Version: bi.Version, Revision: bi.Revision, Modified: bi.Modified, Go: bi.GoVersion},
		Started:    start.UTC().Format(time.RFC3339),
		Options:    opt.releaseOptions(),
		Client:     release.Client{ProtocolVersion: RequestedVersion, ProtocolVersions: ProtocolVersions(), ClientInfo: info, Capabilities: caps},
		Candidates: src,
		Counts:     release.Counts{Candidates: sum.Candidates, Servers: sum.Servers, UnreachableByKind: byKind},
	}
}

// releaseOptions are the crawl's bounds as release.json records them.
func (opt *Options) releaseOptions() release.Options {
	return release.Options{
		Concurrency: opt.Concurrency, PerHost: opt.PerHost, Timeout: opt.Probe.Timeout.String(),
		MaxTools: opt.Probe.MaxTools, MaxBytes: opt.Probe.MaxBytes, MaxPages: opt.Probe.MaxPages,
		MaxMemory: opt.MaxMemory, AllowPrivate: opt.AllowPrivate, OmitElapsed: opt.OmitElapsed,
		PackageConcurrency: opt.Packages.Concurrency, Shard: opt.Shard.String(),
		NoPackages: opt.NoPackages, SandboxMemory: sandboxMemory(opt),
	}
}

// InitializeSent is what the crawl's client sends in initialize.
type InitializeSent struct {
	ProtocolVersion string          `json:"protocolVersion"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
	Capabilities    json.RawMessage `json:"capabilities"`
}

// Declared returns the initialize parameters the crawl's client sends,
// taken off the wire of a handshake with an in-memory server: the SDK
// decides part of them, so they are read, not restated.
func Declared(ctx context.Context) (InitializeSent, error) {
	var sent InitializeSent
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcp.NewServer(&mcp.Implementation{Name: "declared", Version: "0"}, nil).Connect(ctx, st, nil)
	if err != nil {
		return sent, err
	}
	defer ss.Close()
	rec := &recordTransport{inner: ct}
	cs, err := newClient().Connect(ctx, rec, &mcp.ClientSessionOptions{ProtocolVersion: RequestedVersion})
	if err != nil {
		return sent, err
	}
	cs.Close()
	err = json.Unmarshal(rec.params, &sent)
	return sent, err
}

// recordTransport keeps the params of the initialize request written.
type recordTransport struct {
	inner  mcp.Transport
	params json.RawMessage
}

func (t *recordTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordConn{Connection: c, t: t}, nil
}

type recordConn struct {
	mcp.Connection
	t *recordTransport
}

func (c *recordConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
		c.t.params = append(json.RawMessage(nil), req.Params...)
	}
	return c.Connection.Write(ctx, msg)
}

// sandboxMemory is the sandbox's memory bound where packages are crawled
// (their records depend on it), else 0, so that a release of remotes
// alone says nothing of sandboxes.
func sandboxMemory(opt *Options) int64 {
	if opt.Packages.Concurrency == 0 {
		return 0
	}
	return opt.Packages.Limits.Memory
}
