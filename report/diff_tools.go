package report

import (
	"fmt"
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/internal/toolid"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// ToolsTotals is the tool count of both reports and, when the two runs'
// tools.parquet were compared, the tools added, removed, changed and
// unchanged.
type ToolsTotals struct {
	Change
	*ToolCounts
}

// ToolCounts are the tool-level counts of a diff. A tool is identified by
// its server id, its name and its ordinal among the tools of that name on
// that server; it changed when its definition_sha256 differs.
type ToolCounts struct {
	Added     int64 `json:"added"`
	Removed   int64 `json:"removed"`
	Changed   int64 `json:"changed"`
	Unchanged int64 `json:"unchanged"`
}

// ServersTotals is the server count of both reports and, from the two
// runs' tables, the servers with tools in one release only.
type ServersTotals struct {
	Change
	*ServerCounts
}

// ServerCounts are the servers of a tool-level diff. Added and Removed are
// servers with tools in one release only; ReachableOldOnly and
// ReachableNewOnly, present when both releases carry servers.jsonl, are
// servers listed in both but reachable in one only.
type ServerCounts struct {
	Added            int64  `json:"added"`
	Removed          int64  `json:"removed"`
	ReachableOldOnly *int64 `json:"reachable_old_only,omitempty"`
	ReachableNewOnly *int64 `json:"reachable_new_only,omitempty"`
}

// ChangeKind is how a tool differs between two runs (toolid's one kind
// of change, shared with scan's lock); JSON spells it "added", "removed"
// or "changed".
type ChangeKind = toolid.ChangeKind

// The kinds of a ToolChange.
const (
	Added   = toolid.Added
	Removed = toolid.Removed
	Changed = toolid.Changed
)

// ToolChange is one tool added, removed or changed.
type ToolChange struct {
	Change   ChangeKind `json:"change"`
	ServerID *string    `json:"server_id"`
	Tool     *string    `json:"tool"`
	// NameOrdinal is the tool's position among the tools of its name on its
	// server (0 for the first).
	NameOrdinal int64 `json:"name_ordinal"`
	// OldSHA256 and NewSHA256 are the definition hashes, empty on the side
	// without the tool.
	OldSHA256 string `json:"old_definition_sha256,omitempty"`
	NewSHA256 string `json:"new_definition_sha256,omitempty"`
	// Old and New are the tool's labels on each side.
	Old, New         classify.Set `json:"-"`
	OldReq, NewReq   classify.Set `json:"-"`
	ClassesGained    []string     `json:"classes_gained"`
	ClassesLost      []string     `json:"classes_lost"`
	RequiredGained   []string     `json:"required_classes_gained"`
	RequiredLost     []string     `json:"required_classes_lost"`
	OldClasses       []string     `json:"old_classes"`
	NewClasses       []string     `json:"new_classes"`
	OldLine, NewLine int64        `json:"-"`
}

// SetLabels fills the label lists from Old, New, OldReq and NewReq.
func (c *ToolChange) SetLabels() {
	c.OldClasses, c.NewClasses = c.Old.IDs(classify.Classes), c.New.IDs(classify.Classes)
	gained, lost := toolid.GainedLost(c.Old, c.New)
	c.ClassesGained, c.ClassesLost = gained.IDs(classify.Classes), lost.IDs(classify.Classes)
	gained, lost = toolid.GainedLost(c.OldReq, c.NewReq)
	c.RequiredGained, c.RequiredLost = gained.IDs(classify.Classes), lost.IDs(classify.Classes)
}

// ToolChanges are the first rows of each list of a tool-level diff (all of
// them are in changes.parquet).
type ToolChanges struct {
	Added            []ToolChange `json:"added"`
	Removed          []ToolChange `json:"removed"`
	Changed          []ToolChange `json:"changed"`
	ServersAdded     []string     `json:"servers_added"`
	ServersRemoved   []string     `json:"servers_removed"`
	ReachableOldOnly []string     `json:"reachable_old_only,omitempty"`
	ReachableNewOnly []string     `json:"reachable_new_only,omitempty"`
}

// ToolDiff is the tool-level part of a diff, as the comparison of two
// runs' tools.parquet yields it.
type ToolDiff struct {
	Tools   ToolCounts
	Servers ServerCounts
	// ClassesGained counts, per class, the tools that carry it in the new
	// release and did not in the old: a changed tool that gained it, or an
	// added tool that has it. ClassesLost is the converse (a removed tool
	// loses all its classes), so gained - lost is each class's change in
	// the class totals. RequiredGained and RequiredLost are the same for
	// classes carried by a required property.
	ClassesGained, ClassesLost, RequiredGained, RequiredLost map[string]int64
	// First holds the first rows of each list.
	First ToolChanges
}

// NewToolDiff returns an empty ToolDiff with every class counted at zero.
func NewToolDiff() *ToolDiff {
	d := &ToolDiff{}
	for _, m := range []*map[string]int64{&d.ClassesGained, &d.ClassesLost, &d.RequiredGained, &d.RequiredLost} {
		*m = map[string]int64{}
		for _, id := range ClassOrder() {
			(*m)[id] = 0
		}
	}
	d.First = ToolChanges{Added: []ToolChange{}, Removed: []ToolChange{}, Changed: []ToolChange{}, ServersAdded: []string{}, ServersRemoved: []string{}}
	return d
}

// Count adds one tool's change of labels to the class counts.
func (d *ToolDiff) Count(old, new, oldReq, newReq classify.Set) {
	gained, lost := toolid.GainedLost(old, new)
	for _, id := range gained.IDs(classify.Classes) {
		d.ClassesGained[id]++
	}
	for _, id := range lost.IDs(classify.Classes) {
		d.ClassesLost[id]++
	}
	gained, lost = toolid.GainedLost(oldReq, newReq)
	for _, id := range gained.IDs(classify.Classes) {
		d.RequiredGained[id]++
	}
	for _, id := range lost.IDs(classify.Classes) {
		d.RequiredLost[id]++
	}
}

// Gained returns the classes of ids that some tool gained.
func (d *ToolDiff) Gained(ids []string) []string {
	var out []string
	for _, id := range ids {
		if d.ClassesGained[id] > 0 {
			out = append(out, id)
		}
	}
	return out
}

// AddTools sets the tool-level comparison beside the class totals.
func (d *DiffResult) AddTools(td *ToolDiff) {
	tc, sc := td.Tools, td.Servers
	d.Tools.ToolCounts, d.Servers.ServerCounts = &tc, &sc
	d.ClassesGained, d.ClassesLost = td.ClassesGained, td.ClassesLost
	d.RequiredGained, d.RequiredLost = td.RequiredGained, td.RequiredLost
	first := td.First
	d.ToolChanges = &first
}

// writeToolsMarkdown writes the tool-level part of a diff: the counts, the
// classes gained and lost, and the first rows of each list.
func (d *DiffResult) writeToolsMarkdown(p func(string, ...any), h string) {
	tc, sc, f := d.Tools.ToolCounts, d.Servers.ServerCounts, d.ToolChanges
	p("\n%s## Tools, one by one\n\n", h)
	p("A tool is its server id, its name and its ordinal among the tools of that name on that server; it changed when its definition hash (`definition_sha256`: the whole tool object, canonical JSON) differs.\n\n")
	p("| | Count |\n|---|---:|\n")
	p("| Tools added | %s |\n| Tools removed | %s |\n| Tools changed | %s |\n| Tools unchanged | %s |\n", group(tc.Added), group(tc.Removed), group(tc.Changed), group(tc.Unchanged))
	p("| Servers added | %s |\n| Servers removed | %s |\n", group(sc.Added), group(sc.Removed))
	if sc.ReachableOldOnly != nil {
		p("| Servers reachable in the old release only | %s |\n| Servers reachable in the new release only | %s |\n", group(*sc.ReachableOldOnly), group(*sc.ReachableNewOnly))
	}
	p("\nTools gaining or losing each class (an added tool gains its classes, a removed one loses them):\n\n")
	p("| Class | Gained | Lost | Required gained | Required lost |\n|---|---:|---:|---:|---:|\n")
	for _, id := range ClassOrder() {
		p("| %s | %s | %s | %s | %s |\n", mdCode(id), group(d.ClassesGained[id]), group(d.ClassesLost[id]), group(d.RequiredGained[id]), group(d.RequiredLost[id]))
	}
	for _, list := range []struct {
		title string
		rows  []ToolChange
		n     int64
	}{{"Tools added", f.Added, tc.Added}, {"Tools removed", f.Removed, tc.Removed}, {"Tools changed", f.Changed, tc.Changed}} {
		if list.n == 0 {
			continue
		}
		p("\n%s### %s (%s)\n\n", h, list.title, firstOf(len(list.rows), list.n))
		p("| Server | Tool | # | Classes before | Classes after | Gained | Lost |\n|---|---|---:|---|---|---|---|\n")
		for _, c := range list.rows {
			p("| %s | %s | %d | %s | %s | %s | %s |\n", mdCode(strOrNull(c.ServerID)), mdCode(strOrNull(c.Tool)), c.NameOrdinal,
				idList(c.OldClasses, c.Change == Added), idList(c.NewClasses, c.Change == Removed),
				idList(c.ClassesGained, false), idList(c.ClassesLost, false))
		}
	}
	for _, list := range []struct {
		title string
		ids   []string
		n     int64
	}{{"Servers added", f.ServersAdded, sc.Added}, {"Servers removed", f.ServersRemoved, sc.Removed},
		{"Servers reachable in the old release only", f.ReachableOldOnly, deref(sc.ReachableOldOnly)},
		{"Servers reachable in the new release only", f.ReachableNewOnly, deref(sc.ReachableNewOnly)}} {
		if list.n == 0 {
			continue
		}
		p("\n%s### %s (%s)\n\n", h, list.title, firstOf(len(list.ids), list.n))
		for _, id := range list.ids {
			p("- %s\n", mdCode(id))
		}
	}
}

func firstOf(shown int, n int64) string {
	if int64(shown) == n {
		return group(n)
	}
	return fmt.Sprintf("the first %d of %s", shown, group(n))
}

func strOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// idList is a cell of label ids; absent marks the side without the tool.
func idList(ids []string, absent bool) string {
	if absent {
		return "–"
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}
