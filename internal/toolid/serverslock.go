// A servers lock pins the tools of many servers in one file: a config
// scan (every server a developer's agents are configured with) keeps one,
// each server's tools as the one-server lock holds them.

package toolid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/openreg"
	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
)

// ServersLock is a lock file of many servers, in server id order.
type ServersLock struct {
	Version int `json:"version"`
	// Servers each hold one server's tools, as a one-server lock does.
	Servers []ServerTools `json:"servers"`
}

// ServerTools is one server of a ServersLock.
type ServerTools struct {
	ServerID string `json:"server_id"`
	Tools    []Tool `json:"tools"`
}

// NewServersLock returns an empty servers lock.
func NewServersLock() *ServersLock {
	return &ServersLock{Version: Version, Servers: []ServerTools{}}
}

// File is server id's tools as a one-server lock, nil when l pins no
// server of that id.
func (l *ServersLock) File(serverID string) *File {
	for _, s := range l.Servers {
		if s.ServerID == serverID {
			return &File{Version: Version, ServerID: s.ServerID, Tools: s.Tools}
		}
	}
	return nil
}

// Put pins f's tools as its server's, in place of any pinned before.
func (l *ServersLock) Put(f *File) {
	st := ServerTools{ServerID: f.ServerID, Tools: f.Tools}
	i, found := slices.BinarySearchFunc(l.Servers, f.ServerID, func(s ServerTools, id string) int { return strings.Compare(s.ServerID, id) })
	if found {
		l.Servers[i] = st
		return
	}
	l.Servers = slices.Insert(l.Servers, i, st)
}

// Drop unpins server id.
func (l *ServersLock) Drop(serverID string) {
	l.Servers = slices.DeleteFunc(l.Servers, func(s ServerTools) bool { return s.ServerID == serverID })
}

// ReadServersLock reads a servers lock file, as Read reads a one-server
// lock: a regular file of at most MaxLockBytes holding one JSON document.
func ReadServersLock(path string) (*ServersLock, error) {
	b, err := openreg.ReadFile(path, MaxLockBytes)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var l ServersLock
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: not a servers lock file: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: not a servers lock file: more after the JSON document (at byte %d)", path, dec.InputOffset())
	}
	if l.Version != Version {
		return nil, fmt.Errorf("%s: lock file version %d; this build reads version %d", path, l.Version, Version)
	}
	if l.Servers == nil {
		l.Servers = []ServerTools{}
	}
	seen := map[string]bool{}
	for _, s := range l.Servers {
		if seen[s.ServerID] {
			return nil, fmt.Errorf("%s: server %q is pinned twice", path, s.ServerID)
		}
		seen[s.ServerID] = true
		for i := range s.Tools {
			for _, ids := range [][]string{s.Tools[i].Classes, s.Tools[i].RequiredClasses} {
				if _, err := setOf(ids); err != nil {
					return nil, fmt.Errorf("%s: server %q tool %d: %w", path, s.ServerID, i, err)
				}
			}
		}
	}
	slices.SortFunc(l.Servers, func(a, b ServerTools) int { return strings.Compare(a.ServerID, b.ServerID) })
	return &l, nil
}

// ReadPinnedServers is ReadPinned for a servers lock: the pinned servers,
// or nil when there is no lock yet and its folder is there, so that a lock
// that can be neither read nor written fails before any server is asked.
func ReadPinnedServers(path string) (*ServersLock, error) {
	exists, err := lockPathReady(path)
	if err != nil || !exists {
		return nil, err
	}
	return ReadServersLock(path)
}

// Write writes the lock atomically, as File.Write does.
func (l *ServersLock) Write(path string) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return outset.WriteFile(path, append(b, '\n'), 0o644)
}

// Pin is the lock of server id's tools in doc, a tools/list result as a
// census record (as the crawl's client writes it).
func Pin(serverID string, doc []byte) (*File, error) {
	f := New(serverID)
	if err := f.AddRecord(doc); err != nil {
		return nil, fmt.Errorf("%s: %w", serverID, err)
	}
	return f, nil
}
