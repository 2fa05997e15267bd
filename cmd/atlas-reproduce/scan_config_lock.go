package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/termtext"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
)

// lockID is a configured server's id in the servers lock: its config file
// (relative to the repository, or to the home folder as ~/, so that one
// lock serves every checkout and machine) and its name.
func lockID(o scanConfigOptions, file, name string) string {
	rel := func(base, prefix string) (string, bool) {
		if base == "" {
			return "", false
		}
		r, err := filepath.Rel(base, file)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", false
		}
		return prefix + filepath.ToSlash(r), true
	}
	if r, ok := rel(o.Repo, ""); ok {
		return r + "#" + name
	}
	if r, ok := rel(o.Home, "~/"); ok {
		return r + "#" + name
	}
	return filepath.ToSlash(file) + "#" + name
}

// configLock is the lock step of a config scan: the servers scanned now
// are pinned in o.Lock when it does not exist yet, and compared with it
// otherwise; each server's changes are set on it. With o.Approve the
// changes are accepted: the lock is rewritten with the tools as listed now,
// and each accepted change is named on standard error. It returns the
// changes still unapproved.
func configLock(env *cmdEnv, o scanConfigOptions, pinned *toolid.ServersLock, servers []configServer) (int, error) {
	first := pinned == nil
	if first {
		pinned = toolid.NewServersLock()
	}
	configured := map[string]bool{}
	pins, tools, changes := 0, 0, 0
	for i := range servers {
		s := &servers[i]
		configured[s.ID] = true
		if s.doc == nil {
			continue // not scanned: its pin, if any, stands
		}
		now, err := toolid.Pin(s.ID, s.doc)
		if err != nil {
			return 0, err
		}
		if first {
			pinned.Put(now)
			pins++
			tools += len(now.Tools)
			continue
		}
		old := pinned.File(s.ID)
		if old == nil {
			old = toolid.New(s.ID) // a server new to the lock: each tool is added
		}
		s.Changes = toolid.Compare(old, now)
		if len(s.Changes) == 0 {
			continue
		}
		changes += len(s.Changes)
		var b bytes.Buffer
		if err := toolid.WriteChanges(&b, s.Changes); err != nil {
			return 0, err
		}
		verb := ""
		if o.Approve {
			verb = "approved "
			pinned.Put(now)
		}
		fmt.Fprintf(env.stderr, "scan: %s:%d: %s: %s since %s\n", termtext.Safe(s.File), s.Line, termtext.Safe(s.Name), countTools(len(s.Changes))+" changed", o.Lock)
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			fmt.Fprintf(env.stderr, "  %s%s\n", verb, termtext.Safe(l))
		}
	}
	var gone []string
	for _, st := range pinned.Servers {
		if !configured[st.ServerID] {
			gone = append(gone, st.ServerID)
		}
	}
	for _, id := range gone {
		if o.Approve {
			pinned.Drop(id)
			fmt.Fprintf(env.stderr, "scan: approved: %s is no longer configured; unpinned from %s\n", termtext.Safe(id), o.Lock)
		} else {
			fmt.Fprintf(env.stderr, "scan: %s pins %s, which no config searched names now\n", o.Lock, termtext.Safe(id))
		}
	}
	switch {
	case first:
		fmt.Fprintf(env.stderr, "scan: pinned %s of %d servers in %s\n", countTools(tools), pins, o.Lock)
		return 0, pinned.Write(o.Lock)
	case o.Approve && (changes > 0 || len(gone) > 0):
		fmt.Fprintf(env.stderr, "scan: approved %d changes; %s rewritten\n", changes+len(gone), o.Lock)
		return 0, pinned.Write(o.Lock)
	case o.Approve:
		return 0, nil
	}
	return changes, nil
}
