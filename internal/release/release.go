// Package release is a census release on disk: its file names, its
// release.json (how a crawl made it), and the writers that put its files
// in place as hashverify reads them.
package release

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
)

// File is the provenance file of a crawl release, listed in its
// SHA256SUMS.
const File = "release.json"

// Release is release.json: how a census release was crawled.
type Release struct {
	// Tool is the crawler's version and VCS revision.
	Tool Tool `json:"tool"`
	// Started is when the crawl whose probes the release holds began
	// (for a resumed crawl, its first run: a crawl resumes only with the
	// options it began with), Finished when the release was written; UTC,
	// RFC 3339.
	Started  string `json:"started"`
	Finished string `json:"finished"`
	// Options are the crawl's bounds.
	Options Options `json:"options"`
	// Client is what the crawler declared in initialize.
	Client Client `json:"client"`
	// Candidates is where the servers came from.
	Candidates Source `json:"candidates"`
	// Counts are what the crawl found.
	Counts Counts `json:"counts"`
	// Shard says which part of the candidate list a partial release
	// (crawl --shard K/N) holds; nil for a whole release.
	Shard *Shard `json:"shard,omitempty"`
	// Shards are the partial releases a merged release was made of, in
	// shard order; nil for a release crawled whole.
	Shards []ShardPart `json:"shards,omitempty"`
}

// Shard names one shard of one candidate list.
type Shard struct {
	// Index is K of K/N, from 0; Count is N.
	Index int `json:"index"`
	Count int `json:"count"`
	// CandidatesSHA256 is the SHA-256 of the whole candidate list as
	// candidates_remotes.jsonl holds it: shards of one list have the same.
	CandidatesSHA256 string `json:"candidates_sha256"`
	// Servers are the distinct servers of the shard.
	Servers int `json:"servers"`
}

// ShardPart is one partial release of a merged release: its shard, the
// SHA-256 of its release.json, when it was crawled and with what
// scheduling (options that never change a record).
type ShardPart struct {
	Index         int    `json:"index"`
	ReleaseSHA256 string `json:"release_sha256"`
	Started       string `json:"started"`
	Finished      string `json:"finished"`
	Servers       int    `json:"servers"`
	Concurrency   int    `json:"concurrency"`
	PerHost       int    `json:"per_host"`
	MaxMemory     int64  `json:"max_memory"`
	// PackageConcurrency is the packaged servers run at once.
	PackageConcurrency int `json:"package_concurrency,omitempty"`
}

// Tool names the build that crawled.
type Tool struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go,omitempty"`
}

// Options are the bounds of a crawl; two releases crawled with
// different ones are not like for like.
type Options struct {
	Concurrency  int    `json:"concurrency"`
	PerHost      int    `json:"per_host"`
	Timeout      string `json:"timeout"`
	MaxTools     int    `json:"max_tools"`
	MaxBytes     int64  `json:"max_bytes"`
	MaxPages     int    `json:"max_pages"`
	MaxMemory    int64  `json:"max_memory"`
	AllowPrivate bool   `json:"allow_private"`
	OmitElapsed  bool   `json:"omit_elapsed"`
	// PackageConcurrency is the packaged servers run at once.
	PackageConcurrency int `json:"package_concurrency,omitempty"`
	// Shard is "K/N" for a partial release (see Release.Shard).
	Shard string `json:"shard,omitempty"`
	// NoPackages says the packaged candidates were left out on purpose.
	NoPackages bool `json:"no_packages,omitempty"`
	// SandboxMemory is the memory bound of one package sandbox, where
	// packages were crawled: a server past it is recorded as memory.
	SandboxMemory int64 `json:"sandbox_memory,omitempty"`
	// ReusePackageRecords says packaged servers' records were taken from
	// earlier runs of the same installs under the same conditions where
	// the package cache kept one (the crawl's log says how many).
	ReusePackageRecords bool `json:"reuse_package_records,omitempty"`
}

// Client is the client side of initialize.
type Client struct {
	ProtocolVersion string          `json:"protocol_version"`
	ClientInfo      json.RawMessage `json:"client_info"`
	Capabilities    json.RawMessage `json:"capabilities"`
	// ProtocolVersions are every revision asked for, newest first: the
	// stateless one by server/discover, then ProtocolVersion by
	// initialize.
	ProtocolVersions []string `json:"protocol_versions,omitempty"`
}

// Source is a candidates file and its SHA-256, or a registry and
// the updated_since filter its list was read with.
type Source struct {
	File         string `json:"file,omitempty"`
	SHA256       string `json:"sha256,omitempty"`
	Registry     string `json:"registry,omitempty"`
	UpdatedSince string `json:"updated_since,omitempty"`
}

// Counts are a release's totals.
type Counts struct {
	// Candidates are the candidate lines; Servers the distinct servers.
	Candidates  int `json:"candidates"`
	Servers     int `json:"servers"`
	Reachable   int `json:"reachable"`
	Unreachable int `json:"unreachable"`
	// UnreachableByKind counts the unreachable servers by error_kind.
	UnreachableByKind map[string]int `json:"unreachable_by_kind"`
	Tools             int            `json:"tools"`
	// ByProtocol counts the servers that named a protocol version, by
	// version and generation (see ProtocolCount).
	ByProtocol []ProtocolCount `json:"by_protocol,omitempty"`
	// ByPackageType counts the servers by what they are (a remote, or a
	// package's registry type) and by outcome (see PackageTypeCount).
	ByPackageType []PackageTypeCount `json:"by_package_type,omitempty"`
}

// PackageTypeCount is the number of servers of one type ("remote", or a
// package's registry type: npm, pypi, oci, mcpb, nuget...) with one
// outcome: "reachable", or the error_kind of the unreachable.
type PackageTypeCount struct {
	Type    string `json:"type"`
	Outcome string `json:"outcome"`
	Servers int    `json:"servers"`
}

// ProtocolCount is the number of servers at one protocol version and
// generation ("stateless": reached by server/discover; "session": by
// initialize).
type ProtocolCount struct {
	ProtocolVersion string `json:"protocol_version"`
	Generation      string `json:"generation"`
	Servers         int    `json:"servers"`
}

// Read reads dir's release.json; a folder without one (the frozen
// snapshot, say), or data that is not a folder, gives nil and no error.
func Read(dir string) (*Release, error) {
	r, _, err := ReadBytes(dir)
	return r, err
}

// ReadBytes is Read that also returns the file's bytes, for
// a reader that checks them against a manifest.
func ReadBytes(dir string) (*Release, []byte, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil, nil
	}
	name := filepath.Join(dir, File)
	// release.json is a few kilobytes; a FIFO or a device in its place
	// must not block or fill memory.
	b, err := openreg.ReadFile(name, 64<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var r Release
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("%s: not a release.json: %w", name, err)
	}
	return &r, b, nil
}

// OptionsDiffer names the crawl options, and the client declarations,
// that differ between two releases, sorted; nil when either is unknown.
func OptionsDiffer(a, b *Release) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	va, vb := reflect.ValueOf(a.Options), reflect.ValueOf(b.Options)
	for i := range va.NumField() {
		if va.Field(i).Interface() != vb.Field(i).Interface() {
			tag := va.Type().Field(i).Tag.Get("json")
			out = append(out, fmt.Sprintf("%s: %v → %v", tag, va.Field(i).Interface(), vb.Field(i).Interface()))
		}
	}
	if a.Client.ProtocolVersion != b.Client.ProtocolVersion {
		out = append(out, fmt.Sprintf("protocol_version: %s → %s", a.Client.ProtocolVersion, b.Client.ProtocolVersion))
	}
	if pa, pb := strings.Join(a.Client.ProtocolVersions, ", "), strings.Join(b.Client.ProtocolVersions, ", "); pa != pb {
		out = append(out, fmt.Sprintf("protocol_versions: [%s] → [%s]", pa, pb))
	}
	if string(a.Client.Capabilities) != string(b.Client.Capabilities) {
		out = append(out, fmt.Sprintf("client capabilities: %s → %s", a.Client.Capabilities, b.Client.Capabilities))
	}
	sort.Strings(out)
	return out
}

// KindCounts are the unreachable counts in error_kind order, for the page.
func (c Counts) KindCounts() []KindCount {
	out := make([]KindCount, 0, len(c.UnreachableByKind))
	for _, k := range slices.Sorted(maps.Keys(c.UnreachableByKind)) {
		out = append(out, KindCount{k, c.UnreachableByKind[k]})
	}
	return out
}

// KindCount is one error_kind and its count.
type KindCount struct {
	Kind  string
	Count int
}
