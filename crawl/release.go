package crawl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"time"

	"github.com/atlas-reproduce/atlas-reproduce/crawl/probe"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"

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
	sent, _ := probe.Declared(context.Background()) // an in-memory exchange; it does not fail
	info, caps := sent.ClientInfo, sent.Capabilities
	byKind := sum.UnreachableByKind
	if byKind == nil {
		byKind = map[string]int{}
	}
	return &release.Release{
		Tool:       release.Tool{Name: "atlas-reproduce", Version: bi.Version, Revision: bi.Revision, Modified: bi.Modified, Go: bi.GoVersion},
		Started:    start.UTC().Format(time.RFC3339),
		Options:    opt.releaseOptions(),
		Client:     release.Client{ProtocolVersion: probe.RequestedVersion, ProtocolVersions: probe.ProtocolVersions(), ClientInfo: info, Capabilities: caps},
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
		ReusePackageRecords: opt.Packages.ReuseRecords && opt.Packages.Concurrency > 0,
	}
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
