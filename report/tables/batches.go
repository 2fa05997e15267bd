package tables

import (
	"slices"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// ToolsBatch is a run of tools.parquet rows, column by column. The ordinal
// column is not held: it is the row's position in the file.
type ToolsBatch struct {
	// ServerID holds one value per run of rows with the same server id
	// (a record's tools share one), and serverRef each row's value: a
	// record of tens of thousands of tools keeps its id once. Fill it
	// with AppendServerID.
	ServerID   StringColumn
	serverRef  []int32
	Name       StringColumn
	Line       []int64
	Properties []int32
	// Labels is the union of the labels of each tool's properties;
	// Required the union over its required properties. Each boolean group
	// of the schema (toolsColumns) reads one of these sets.
	Labels, Required []classify.Set
	// CamelCase, WordSplit and Deep are the classes each non-normative
	// sensitivity variant adds to the tool (zero when the run skips them).
	CamelCase, WordSplit, Deep []classify.Set
	// Definition is the SHA-256 of each tool's definition (the whole tool
	// object, canonical JSON), and Schema of its input schema alone
	// (meaningful where HasSchema: the tool has an object schema).
	Definition, Schema []Hash
	HasSchema          []bool
	// NameOrdinal is each tool's ordinal among the tools of its name on
	// its server (0 for the first): with server_id and tool, the tool's
	// identity in diff and scan --lock. The run's sink fills it.
	NameOrdinal []int64
}

// ServerIDOf returns row i's server id and whether it is not null.
func (b *ToolsBatch) ServerIDOf(i int) ([]byte, bool) { return b.ServerID.Value(int(b.serverRef[i])) }

// Hash is a SHA-256 digest.
type Hash = [32]byte

// Len is the number of rows.
func (b *ToolsBatch) Len() int { return len(b.Line) }

// AppendServerID appends a row's server id, or a null when ok is false,
// sharing the previous row's value when it is the same.
func (b *ToolsBatch) AppendServerID(id []byte, ok bool) {
	if !b.ServerID.lastIs(id, ok) {
		b.ServerID.AppendNullable(id, ok)
	}
	b.serverRef = append(b.serverRef, int32(b.ServerID.Len()-1))
}

// Reset empties the batch, keeping its memory.
func (b *ToolsBatch) Reset() {
	b.ServerID.Reset()
	b.serverRef = b.serverRef[:0]
	b.Name.Reset()
	b.Line, b.Properties, b.Labels, b.Required = b.Line[:0], b.Properties[:0], b.Labels[:0], b.Required[:0]
	b.CamelCase, b.WordSplit, b.Deep = b.CamelCase[:0], b.WordSplit[:0], b.Deep[:0]
	b.Definition, b.Schema, b.HasSchema = b.Definition[:0], b.Schema[:0], b.HasSchema[:0]
	b.NameOrdinal = b.NameOrdinal[:0]
}

// grow makes room for n more rows in every column but the strings' bytes
// and the server ids (one value per run of rows).
func (b *ToolsBatch) grow(n int) {
	b.serverRef = slices.Grow(b.serverRef, n)
	b.Name.grow(n)
	b.Line, b.Properties = slices.Grow(b.Line, n), slices.Grow(b.Properties, n)
	b.Labels, b.Required = slices.Grow(b.Labels, n), slices.Grow(b.Required, n)
	b.CamelCase, b.WordSplit, b.Deep = slices.Grow(b.CamelCase, n), slices.Grow(b.WordSplit, n), slices.Grow(b.Deep, n)
	b.Definition, b.Schema, b.HasSchema = slices.Grow(b.Definition, n), slices.Grow(b.Schema, n), slices.Grow(b.HasSchema, n)
	b.NameOrdinal = slices.Grow(b.NameOrdinal, n)
}

func (b *ToolsBatch) appendRows(src *ToolsBatch, from, to int) {
	for _, r := range src.serverRef[from:to] {
		b.appendServerRef(src, int(r))
	}
	b.Name.appendRows(&src.Name, from, to)
	b.Line = append(b.Line, src.Line[from:to]...)
	b.Properties = append(b.Properties, src.Properties[from:to]...)
	b.Labels = append(b.Labels, src.Labels[from:to]...)
	b.Required = append(b.Required, src.Required[from:to]...)
	b.CamelCase = append(b.CamelCase, src.CamelCase[from:to]...)
	b.WordSplit = append(b.WordSplit, src.WordSplit[from:to]...)
	b.Deep = append(b.Deep, src.Deep[from:to]...)
	b.Definition = append(b.Definition, src.Definition[from:to]...)
	b.Schema = append(b.Schema, src.Schema[from:to]...)
	b.HasSchema = append(b.HasSchema, src.HasSchema[from:to]...)
	b.NameOrdinal = append(b.NameOrdinal, src.NameOrdinal[from:to]...)
}

// appendServerRef appends a row whose server id is value r of src's,
// copying the value only when it differs from this batch's last one.
func (b *ToolsBatch) appendServerRef(src *ToolsBatch, r int) {
	c := &src.ServerID
	if !b.ServerID.lastIs(c.data[c.start(r):c.ends[r]], !c.null[r]) {
		b.ServerID.appendRows(c, r, r+1)
	}
	b.serverRef = append(b.serverRef, int32(b.ServerID.Len()-1))
}

// PropertiesBatch is a run of properties.parquet rows, column by column.
// A worker leaves ServerID and Tool empty: they are its tool's, and the
// writer takes them from the chunk's ToolsBatch as it buffers the rows,
// once per tool, so a record's server id is copied neither per property
// on the hot path nor in the row group.
type PropertiesBatch struct {
	ServerID, Tool, Name, Where StringColumn
	// ToolOrdinal is the ordinal of the row's tool. In a chunk's batch it
	// counts from the chunk's first tool (it is the row's index in the
	// chunk's ToolsBatch); in the writer's row group, from the file's.
	ToolOrdinal []int64
	Required    []bool
	Labels      []classify.Set

	// In the writer's row group, ServerID and Tool have one value per tool
	// and toolRef gives each row's; lastOrdinal is the last tool's.
	toolRef     []int32
	lastOrdinal int64
}

// Len is the number of rows.
func (b *PropertiesBatch) Len() int { return len(b.Required) }

// Reset empties the batch, keeping its memory.
func (b *PropertiesBatch) Reset() {
	for _, c := range []*StringColumn{&b.ServerID, &b.Tool, &b.Name, &b.Where} {
		c.Reset()
	}
	b.ToolOrdinal, b.Required, b.Labels, b.toolRef = b.ToolOrdinal[:0], b.Required[:0], b.Labels[:0], b.toolRef[:0]
}

// grow makes room for n more rows in every column but the strings' bytes
// (server ids and tool names have a value per tool, not per row).
func (b *PropertiesBatch) grow(n int) {
	b.Name.grow(n)
	b.Where.grow(n)
	b.ToolOrdinal, b.Required, b.Labels = slices.Grow(b.ToolOrdinal, n), slices.Grow(b.Required, n), slices.Grow(b.Labels, n)
	b.toolRef = slices.Grow(b.toolRef, n)
}

// appendRows appends rows [from, to) of a chunk's batch src, taking the
// server id and tool name of each row's tool from the chunk's tools.
func (b *PropertiesBatch) appendRows(src *PropertiesBatch, tools *ToolsBatch, from, to int, firstOrdinal int64) {
	for _, o := range src.ToolOrdinal[from:to] {
		ord := firstOrdinal + o
		if b.ServerID.Len() == 0 || ord != b.lastOrdinal {
			r := int(tools.serverRef[o])
			b.ServerID.appendRows(&tools.ServerID, r, r+1)
			b.Tool.appendRows(&tools.Name, int(o), int(o)+1)
			b.lastOrdinal = ord
		}
		b.toolRef = append(b.toolRef, int32(b.ServerID.Len()-1))
		b.ToolOrdinal = append(b.ToolOrdinal, ord)
	}
	b.Name.appendRows(&src.Name, from, to)
	b.Where.appendRows(&src.Where, from, to)
	b.Required = append(b.Required, src.Required[from:to]...)
	b.Labels = append(b.Labels, src.Labels[from:to]...)
}

// classesBatch is classes.parquet's rows: the class table beside the
// published one, then the buckets (which have no required counts).
type classesBatch struct {
	Label                        StringColumn
	Normative                    []bool
	Tools, PublishedTools, Delta []int64
	Percent, PublishedPercent    []float64
	Required, PublishedRequired  optInt64s
	DeltaRequired                optInt64s
}

// optInt64s is an optional integer column: the non-null values and a
// definition level per row.
type optInt64s struct {
	values []int64
	defs   []int16
}

func (c *optInt64s) append(v *int64) {
	if v == nil {
		c.defs = append(c.defs, 0)
		return
	}
	c.values = append(c.values, *v)
	c.defs = append(c.defs, 1)
}

func (c *optInt64s) get() ([]int64, []int16) { return c.values, c.defs }

// Len is the number of rows.
func (b *classesBatch) Len() int { return len(b.Normative) }

// Reset empties the batch.
func (b *classesBatch) Reset() { *b = classesBatch{} }

// ChangesBatch is a run of changes.parquet rows: tools added, removed or
// changed between two runs. Fill it with ChangesWriter.Add.
type ChangesBatch struct {
	Change, ServerID, Tool StringColumn
	NameOrdinal            []int64
	OldOrdinal, NewOrdinal optInt64s
	OldDef, NewDef         []Hash
	HasOld, HasNew         []bool
	Old, New               []classify.Set
	OldReq, NewReq         []classify.Set
}

// Len is the number of rows.
func (b *ChangesBatch) Len() int { return len(b.NameOrdinal) }

// Reset empties the batch, keeping its memory.
func (b *ChangesBatch) Reset() {
	b.Change.Reset()
	b.ServerID.Reset()
	b.Tool.Reset()
	b.NameOrdinal = b.NameOrdinal[:0]
	b.OldOrdinal, b.NewOrdinal = optInt64s{b.OldOrdinal.values[:0], b.OldOrdinal.defs[:0]}, optInt64s{b.NewOrdinal.values[:0], b.NewOrdinal.defs[:0]}
	b.OldDef, b.NewDef, b.HasOld, b.HasNew = b.OldDef[:0], b.NewDef[:0], b.HasOld[:0], b.HasNew[:0]
	b.Old, b.New, b.OldReq, b.NewReq = b.Old[:0], b.New[:0], b.OldReq[:0], b.NewReq[:0]
}
