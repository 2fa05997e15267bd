package crawl

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atlas-reproduce/atlas-reproduce/internal/buildinfo"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// candidates are the crawl's candidates and where they came from: the
// list given, or the file read and its SHA-256.
func (opt *Options) candidates() ([]Candidate, report.ReleaseSource, error) {
	if opt.CandidateList != nil {
		return opt.CandidateList, opt.Source, nil
	}
	b, err := os.ReadFile(opt.Candidates)
	if err != nil {
		return nil, report.ReleaseSource{}, err
	}
	cands, err := ParseCandidates(bytes.NewReader(b), opt.Candidates)
	if err != nil {
		return nil, report.ReleaseSource{}, err
	}
	h := sha256.Sum256(b)
	return cands, report.ReleaseSource{File: opt.Candidates, SHA256: hex.EncodeToString(h[:])}, nil
}

// release is the crawl's release.json.
func (opt *Options) release(start time.Time, src report.ReleaseSource, sum *Summary) *report.Release {
	bi := buildinfo.Read()
	// As initialize carries them on the wire.
	params, _ := json.Marshal(&mcp.InitializeParams{ProtocolVersion: RequestedVersion, ClientInfo: &ClientInfo, Capabilities: &ClientCapabilities})
	var sent struct {
		ClientInfo   json.RawMessage `json:"clientInfo"`
		Capabilities json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(params, &sent)
	info, caps := sent.ClientInfo, sent.Capabilities
	byKind := sum.UnreachableByKind
	if byKind == nil {
		byKind = map[string]int{}
	}
	return &report.Release{
		Tool:    report.ReleaseTool{Name: "atlas-reproduce", Version: bi.Version, Revision: bi.Revision, Modified: bi.Modified, Go: bi.GoVersion},
		Started: start.UTC().Format(time.RFC3339),
		Options: report.ReleaseOptions{
			Concurrency: opt.Concurrency, PerHost: opt.PerHost, Timeout: opt.Probe.Timeout.String(),
			MaxTools: opt.Probe.MaxTools, MaxBytes: opt.Probe.MaxBytes, MaxPages: opt.Probe.MaxPages,
			MaxMemory: opt.MaxMemory, AllowPrivate: opt.AllowPrivate, OmitElapsed: opt.OmitElapsed,
		},
		Client:     report.ReleaseClient{ProtocolVersion: RequestedVersion, ClientInfo: info, Capabilities: caps},
		Candidates: src,
		Counts:     report.ReleaseCounts{Candidates: sum.Candidates, Servers: sum.Servers, UnreachableByKind: byKind},
	}
}
