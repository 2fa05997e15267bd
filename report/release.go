package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
)

// ReleaseFile is the provenance file of a crawl release, listed in its
// SHA256SUMS.
const ReleaseFile = "release.json"

// Release is release.json: how a census release was crawled.
type Release struct {
	// Tool is the crawler's version and VCS revision.
	Tool ReleaseTool `json:"tool"`
	// Started and Finished are the crawl's start and end, UTC, RFC 3339.
	// A resumed crawl keeps the start of its first run.
	Started  string `json:"started"`
	Finished string `json:"finished"`
	// Options are the crawl's bounds.
	Options ReleaseOptions `json:"options"`
	// Client is what the crawler declared in initialize.
	Client ReleaseClient `json:"client"`
	// Candidates is where the servers came from.
	Candidates ReleaseSource `json:"candidates"`
	// Counts are what the crawl found.
	Counts ReleaseCounts `json:"counts"`
}

// ReleaseTool names the build that crawled.
type ReleaseTool struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go,omitempty"`
}

// ReleaseOptions are the bounds of a crawl; two releases crawled with
// different ones are not like for like.
type ReleaseOptions struct {
	Concurrency  int    `json:"concurrency"`
	PerHost      int    `json:"per_host"`
	Timeout      string `json:"timeout"`
	MaxTools     int    `json:"max_tools"`
	MaxBytes     int64  `json:"max_bytes"`
	MaxPages     int    `json:"max_pages"`
	MaxMemory    int64  `json:"max_memory"`
	AllowPrivate bool   `json:"allow_private"`
	OmitElapsed  bool   `json:"omit_elapsed"`
}

// ReleaseClient is the client side of initialize.
type ReleaseClient struct {
	ProtocolVersion string          `json:"protocol_version"`
	ClientInfo      json.RawMessage `json:"client_info"`
	Capabilities    json.RawMessage `json:"capabilities"`
}

// ReleaseSource is a candidates file and its SHA-256, or a registry and
// the updated_since filter its list was read with.
type ReleaseSource struct {
	File         string `json:"file,omitempty"`
	SHA256       string `json:"sha256,omitempty"`
	Registry     string `json:"registry,omitempty"`
	UpdatedSince string `json:"updated_since,omitempty"`
}

// ReleaseCounts are a release's totals.
type ReleaseCounts struct {
	// Candidates are the candidate lines; Servers the distinct servers.
	Candidates  int `json:"candidates"`
	Servers     int `json:"servers"`
	Reachable   int `json:"reachable"`
	Unreachable int `json:"unreachable"`
	// UnreachableByKind counts the unreachable servers by error_kind.
	UnreachableByKind map[string]int `json:"unreachable_by_kind"`
	Tools             int            `json:"tools"`
}

// ReadRelease reads dir's release.json; a folder without one (the frozen
// snapshot, say) gives nil and no error.
func ReadRelease(dir string) (*Release, error) {
	name := filepath.Join(dir, ReleaseFile)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Release
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a release.json: %w", name, err)
	}
	return &r, nil
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
	if string(a.Client.Capabilities) != string(b.Client.Capabilities) {
		out = append(out, fmt.Sprintf("client capabilities: %s → %s", a.Client.Capabilities, b.Client.Capabilities))
	}
	sort.Strings(out)
	return out
}
