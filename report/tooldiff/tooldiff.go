// Package tooldiff compares two runs tool by tool: which servers and tools
// appeared, vanished or changed between two census releases, and which
// tools gained or lost a risk class.
//
// A tool is identified by its toolid.Key: its server id, its name and its
// ordinal among the tools of that name on that server; it changed
// (toolid.Changed) when its definition_sha256 differs. The comparison reads both runs' tools.parquet a batch of rows at
// a time and holds, per tool of the old run, one fixed-size entry (a
// 16-byte digest of server id and name, the 32-byte definition hash, the
// labels and the row: 56 bytes) in one sorted slice, never the rows'
// strings: about 51 MB for the 918,156 tools of a 4× census. Servers are
// held by id (a census has tens of thousands).
package tooldiff

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"github.com/atlas-reproduce/atlas-reproduce/report/tables"
	"io"
	"math/bits"
	"path/filepath"
	"slices"

	"github.com/atlas-reproduce/atlas-reproduce/internal/outset"
	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/report"
)

// Options configure a comparison.
type Options struct {
	// Out is a folder to write changes.parquet into (one row per tool
	// added, removed or changed), published only when the comparison
	// succeeds; empty writes none unless Changes is set.
	Out string
	// Changes receives changes.parquet when Out is empty; nil writes none.
	Changes io.Writer
	// First is how many rows of each list the result keeps (default 20).
	First int
	// NewTools is the new run's tools.parquet when it is not yet in newDir
	// (a run held to a baseline before it publishes its files); empty
	// reads newDir/tools.parquet.
	NewTools string
	// NewServers is the new release's servers.jsonl(.gz) when newDir does
	// not lead to it; empty looks for it from newDir.
	NewServers string
}

// entry is one tool of the old run.
type entry struct {
	key      key
	def      tables.Hash
	ordinal  uint32
	labels   uint8 // classify.Set of the classes
	required uint8
	matched  bool
}

// key is the digest of a tool's server id and name (its toolid.Key but
// the ordinal, which the order of the entries holds).
type key = toolid.Digest

// digest is the key of row r.
func digest(k *toolid.Keyer, r *tables.ToolRow) key {
	return k.Digest(r.Server, r.HasServer, r.Name, r.HasName)
}

// Compare compares the tools.parquet of the runs in the folders oldDir and
// newDir.
func Compare(ctx context.Context, oldDir, newDir string, opt Options) (*report.ToolDiff, error) {
	if opt.First <= 0 {
		opt.First = 20
	}
	if opt.Out != "" {
		set, err := outset.Open(opt.Out)
		if err != nil {
			return nil, err
		}
		defer set.Close()
		f, err := set.Create("changes.parquet")
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		opt.Out, opt.Changes = "", bw
		d, err := Compare(ctx, oldDir, newDir, opt)
		if err != nil {
			return nil, err
		}
		if err := bw.Flush(); err != nil {
			return nil, fmt.Errorf("changes.parquet: %w", err)
		}
		return d, set.Commit()
	}
	c := &comparison{opt: opt, keys: toolid.NewKeyer(), d: report.NewToolDiff(), servers: map[string]uint8{}}
	oldPath, newPath := filepath.Join(oldDir, "tools.parquet"), filepath.Join(newDir, "tools.parquet")
	if opt.NewTools != "" {
		newPath = opt.NewTools
	}
	if opt.Changes != nil {
		w, err := tables.NewChangesWriter(opt.Changes, tables.Source("tools changed from the run in "+oldDir+" to the run in "+newDir))
		if err != nil {
			return nil, err
		}
		c.w = w
	}
	// One allocation of the old run's entries: growing the slice by
	// doubling would hold two copies at once.
	size := func(n int64) { c.entries = make([]entry, 0, n) }
	if err := tables.ReadTools(ctx, oldPath, tables.ReadOptions{Rows: size}, c.old); err != nil {
		return nil, err
	}
	c.index()
	if err := tables.ReadTools(ctx, newPath, tables.ReadOptions{}, c.new); err != nil {
		return nil, err
	}
	if err := c.removed(ctx, oldPath); err != nil {
		return nil, err
	}
	c.countServers()
	if c.w != nil {
		if err := c.w.Close(); err != nil {
			return nil, err
		}
	}
	newServers := opt.NewServers
	if newServers == "" && newDir != "" {
		newServers = serversFile(newDir)
	}
	reachability(serversFile(oldDir), newServers, c.d)
	return c.d, nil
}

// comparison is the state of one Compare.
type comparison struct {
	opt  Options
	keys *toolid.Keyer
	d    *report.ToolDiff
	w    *tables.ChangesWriter

	entries []entry
	// slots is an open-addressing table of the runs of equal keys in
	// entries: slot value i+1 is the run starting at entries[i].
	slots []uint32
	// added counts the new tools past the end of their key's run (or of
	// a key the old run lacks), to number them.
	added map[key]int64

	// servers holds each server id's sides: bit 0 old, bit 1 new.
	servers    map[string]uint8
	oldServers []string
}

// old takes one tool of the old run.
func (c *comparison) old(r *tables.ToolRow) error {
	c.entries = append(c.entries, entry{
		key: digest(c.keys, r), def: r.Definition, ordinal: uint32(r.Ordinal),
		labels: uint8(r.Labels & classify.Classes), required: uint8(r.Required & classify.Classes),
	})
	c.server(r, 1)
	return nil
}

func (c *comparison) server(r *tables.ToolRow, side uint8) {
	if !r.HasServer {
		return
	}
	if s, ok := c.servers[string(r.Server)]; ok {
		if s&side == 0 {
			c.servers[string(r.Server)] = s | side
		}
		return
	}
	id := string(r.Server)
	c.servers[id] = side
	if side == 1 {
		c.oldServers = append(c.oldServers, id)
		return
	}
	c.d.Servers.Added++
	if len(c.d.First.ServersAdded) < c.opt.First {
		c.d.First.ServersAdded = append(c.d.First.ServersAdded, id)
	}
}

// index sorts the old tools by key, then by ordinal, so that the tools of
// one name on one server form a run in file order, and indexes the runs.
func (c *comparison) index() {
	slices.SortFunc(c.entries, func(a, b entry) int {
		if k := compareKeys(&a.key, &b.key); k != 0 {
			return k
		}
		return int(a.ordinal) - int(b.ordinal)
	})
	c.slots = make([]uint32, 1<<max(4, bits.Len(uint(2*len(c.entries)))))
	for i := range c.entries {
		if i > 0 && c.entries[i].key == c.entries[i-1].key {
			continue
		}
		for s := c.slot(&c.entries[i].key); ; s = (s + 1) & (len(c.slots) - 1) {
			if c.slots[s] == 0 {
				c.slots[s] = uint32(i + 1)
				break
			}
		}
	}
}

func compareKeys(a, b *key) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

func (c *comparison) slot(k *key) int {
	return int(binary.LittleEndian.Uint64(k[:8]) & uint64(len(c.slots)-1))
}

// run returns the start of k's run in entries, or -1.
func (c *comparison) run(k *key) int {
	for s := c.slot(k); ; s = (s + 1) & (len(c.slots) - 1) {
		v := c.slots[s]
		if v == 0 {
			return -1
		}
		if c.entries[v-1].key == *k {
			return int(v - 1)
		}
	}
}

// new takes one tool of the new run: the n-th tool of a name on a server
// pairs with the n-th of the old run.
func (c *comparison) new(r *tables.ToolRow) error {
	c.server(r, 2)
	k := digest(c.keys, r)
	start := c.run(&k)
	var e *entry
	var nameOrdinal int64
	if start >= 0 {
		for i := start; i < len(c.entries) && c.entries[i].key == k; i++ {
			if !c.entries[i].matched {
				e, nameOrdinal = &c.entries[i], int64(i-start)
				break
			}
			nameOrdinal = int64(i-start) + 1
		}
	}
	newSide := &tables.ChangeSide{Ordinal: r.Ordinal, Definition: r.Definition, Labels: r.Labels & classify.Classes, Required: r.Required & classify.Classes}
	if e == nil {
		if c.added == nil {
			c.added = map[key]int64{}
		}
		nameOrdinal += c.added[k]
		c.added[k]++
		c.d.Tools.Added++
		c.d.Count(0, newSide.Labels, 0, newSide.Required)
		return c.emit(toolid.Added, r, nameOrdinal, nil, newSide, &c.d.First.Added)
	}
	e.matched = true
	oldSide := &tables.ChangeSide{Ordinal: int64(e.ordinal), Definition: e.def, Labels: classify.Set(e.labels), Required: classify.Set(e.required)}
	// Labels are compared for every pair: a new classifier may relabel
	// an unchanged definition.
	c.d.Count(oldSide.Labels, newSide.Labels, oldSide.Required, newSide.Required)
	if e.def == r.Definition {
		c.d.Tools.Unchanged++
		return nil
	}
	c.d.Tools.Changed++
	return c.emit(toolid.Changed, r, nameOrdinal, oldSide, newSide, &c.d.First.Changed)
}

// emit writes one change to changes.parquet (every change, in file order)
// and keeps it in first when it is among the first rows the lists show:
// the tools that gained a class come first, then the rest, each part in
// file order (the new run's for added and changed tools, the old run's
// for removed ones), so that the rows a reviewer must see are not pushed
// out of the list by unremarkable ones.
func (c *comparison) emit(change toolid.ChangeKind, r *tables.ToolRow, nameOrdinal int64, old, new *tables.ChangeSide, first *[]report.ToolChange) error {
	if c.w != nil {
		if err := c.w.Add(change.String(), r.Server, r.Name, r.HasServer, r.HasName, nameOrdinal, old, new); err != nil {
			return err
		}
	}
	var before, after classify.Set
	if old != nil {
		before = old.Labels
	}
	if new != nil {
		after = new.Labels
	}
	gained := after&^before != 0
	at := len(*first)
	if gained {
		// After the last row that gained a class.
		at = 0
		for at < len(*first) && len((*first)[at].ClassesGained) > 0 {
			at++
		}
	}
	if at >= c.opt.First {
		return nil
	}
	tc := report.ToolChange{Change: change, NameOrdinal: nameOrdinal}
	if r.HasServer {
		s := string(r.Server)
		tc.ServerID = &s
	}
	if r.HasName {
		s := string(r.Name)
		tc.Tool = &s
	}
	if old != nil {
		tc.OldSHA256, tc.Old, tc.OldReq = hex.EncodeToString(old.Definition[:]), old.Labels, old.Required
	}
	if new != nil {
		tc.NewSHA256, tc.New, tc.NewReq = hex.EncodeToString(new.Definition[:]), new.Labels, new.Required
	}
	tc.SetLabels()
	*first = slices.Insert(*first, at, tc)
	if len(*first) > c.opt.First {
		*first = (*first)[:c.opt.First]
	}
	return nil
}

// removed reports the old tools no new tool paired with. Their names are
// read again from the old table, in file order, only when they are wanted.
func (c *comparison) removed(ctx context.Context, oldPath string) error {
	type gone struct {
		e           *entry
		nameOrdinal int64
	}
	var rows []gone
	start := 0
	for i := range c.entries {
		e := &c.entries[i]
		if i > 0 && e.key != c.entries[i-1].key {
			start = i
		}
		if e.matched {
			continue
		}
		c.d.Tools.Removed++
		c.d.Count(classify.Set(e.labels), 0, classify.Set(e.required), 0)
		if c.w != nil || len(rows) < c.opt.First {
			rows = append(rows, gone{e, int64(i - start)})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b gone) int { return int(a.e.ordinal) - int(b.e.ordinal) })
	if c.w == nil && len(rows) > c.opt.First {
		rows = rows[:c.opt.First]
	}
	next := 0
	return tables.ReadTools(ctx, oldPath, tables.ReadOptions{NamesOnly: true}, func(r *tables.ToolRow) error {
		for next < len(rows) && int64(rows[next].e.ordinal) == r.Ordinal {
			g := rows[next]
			next++
			old := &tables.ChangeSide{Ordinal: r.Ordinal, Definition: g.e.def, Labels: classify.Set(g.e.labels), Required: classify.Set(g.e.required)}
			if err := c.emit(toolid.Removed, r, g.nameOrdinal, old, nil, &c.d.First.Removed); err != nil {
				return err
			}
		}
		return nil
	})
}

// countServers counts the servers with tools in the old run only.
func (c *comparison) countServers() {
	for _, id := range c.oldServers {
		if c.servers[id]&2 != 0 {
			continue
		}
		c.d.Servers.Removed++
		if len(c.d.First.ServersRemoved) < c.opt.First {
			c.d.First.ServersRemoved = append(c.d.First.ServersRemoved, id)
		}
	}
}
