package tables

import (
	"strings"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

// classBits are the five classes in spec order, bucketBits the two buckets.
var (
	classBits  = []classify.Set{classify.CredentialValue, classify.FilesystemPath, classify.CommandString, classify.MoneyAmount, classify.URLEndpoint}
	bucketBits = []classify.Set{classify.RawContentBlob, classify.AccountIdentity}
)

// columnName turns a label id into a column name: gg:url-endpoint → url_endpoint.
func columnName(id string) string {
	return strings.ReplaceAll(strings.TrimPrefix(id, "gg:"), "-", "_")
}

// labelColumns names the columns of a group of label bits, with suffix.
func labelColumns(bits []classify.Set, suffix string) []string {
	var names []string
	for _, b := range bits {
		names = append(names, columnName(b.ID())+suffix)
	}
	return names
}

// toolsColumns is the schema of tools.parquet: server_id, tool, ordinal,
// name_ordinal, line, property_count, the two hashes, a boolean per class,
// per class-required, and the two buckets.
func toolsColumns() []column[ToolsBatch] {
	cols := []column[ToolsBatch]{
		stringColumn("server_id", true, func(b *ToolsBatch) (*StringColumn, []int32) { return &b.ServerID, b.serverRef }),
		stringColumn("tool", true, func(b *ToolsBatch) (*StringColumn, []int32) { return &b.Name, nil }),
		int64Column("ordinal", func(b *ToolsBatch, first int64, s *scratch) []int64 {
			s.ints = s.ints[:0]
			for i := range b.Len() {
				s.ints = append(s.ints, first+int64(i))
			}
			return s.ints
		}),
		int64Column("name_ordinal", func(b *ToolsBatch, _ int64, _ *scratch) []int64 { return b.NameOrdinal }),
		int64Column("line", func(b *ToolsBatch, _ int64, _ *scratch) []int64 { return b.Line }),
		int32Column("property_count", func(b *ToolsBatch) []int32 { return b.Properties }),
		hashColumn("definition_sha256", false, func(b *ToolsBatch) ([]Hash, []bool) { return b.Definition, nil }),
		hashColumn("schema_sha256", true, func(b *ToolsBatch) ([]Hash, []bool) { return b.Schema, b.HasSchema }),
	}
	cols = append(cols, boolGroup(labelColumns(classBits, ""), classBits, func(b *ToolsBatch) []classify.Set { return b.Labels })...)
	cols = append(cols, boolGroup(labelColumns(classBits, "_required"), classBits, func(b *ToolsBatch) []classify.Set { return b.Required })...)
	cols = append(cols, boolGroup(labelColumns(bucketBits, ""), bucketBits, func(b *ToolsBatch) []classify.Set { return b.Labels })...)
	// The non-normative sensitivity variants, in sensitivity.Variants() order:
	// camel_case_<class>, word_split_<class>, deep_<class>, true where the
	// variant adds the class to the tool. The counts through required
	// properties are in report.json and classify --sensitivity only.
	for i, sets := range [...]func(*ToolsBatch) []classify.Set{
		func(b *ToolsBatch) []classify.Set { return b.CamelCase },
		func(b *ToolsBatch) []classify.Set { return b.WordSplit },
		func(b *ToolsBatch) []classify.Set { return b.Deep },
	} {
		var names []string
		for _, name := range labelColumns(classBits, "") {
			names = append(names, sensitivity.Variants()[i]+"_"+name)
		}
		cols = append(cols, boolGroup(names, classBits, sets)...)
	}
	return cols
}

// propertiesColumns is the schema of properties.parquet: server_id, tool,
// tool_ordinal, property, location (properties, definitions/<key>,
// $defs/<key>; not "where", an SQL keyword), required, then a boolean per
// class and per bucket, as tools.parquet has them (WHERE credential_value).
func propertiesColumns() []column[PropertiesBatch] {
	cols := []column[PropertiesBatch]{
		stringColumn("server_id", true, func(b *PropertiesBatch) (*StringColumn, []int32) { return &b.ServerID, b.toolRef }),
		stringColumn("tool", true, func(b *PropertiesBatch) (*StringColumn, []int32) { return &b.Tool, b.toolRef }),
		int64Column("tool_ordinal", func(b *PropertiesBatch, _ int64, _ *scratch) []int64 { return b.ToolOrdinal }),
		stringColumn("property", false, func(b *PropertiesBatch) (*StringColumn, []int32) { return &b.Name, nil }),
		stringColumn("location", false, func(b *PropertiesBatch) (*StringColumn, []int32) { return &b.Where, nil }),
		boolColumn("required", func(b *PropertiesBatch, _ *scratch) []bool { return b.Required }),
	}
	cols = append(cols, boolGroup(labelColumns(classBits, ""), classBits, func(b *PropertiesBatch) []classify.Set { return b.Labels })...)
	cols = append(cols, boolGroup(labelColumns(bucketBits, ""), bucketBits, func(b *PropertiesBatch) []classify.Set { return b.Labels })...)
	return cols
}

// classesColumns is the schema of classes.parquet.
func classesColumns() []column[classesBatch] {
	opt := func(name string, c func(*classesBatch) *optInt64s) column[classesBatch] {
		return countColumn(name, true, func(b *classesBatch, _ *scratch) ([]int64, []int16) { return c(b).get() })
	}
	count := func(name string, c func(*classesBatch) []int64) column[classesBatch] {
		return countColumn(name, false, func(b *classesBatch, _ *scratch) ([]int64, []int16) { return c(b), nil })
	}
	return []column[classesBatch]{
		stringColumn("label", false, func(b *classesBatch) (*StringColumn, []int32) { return &b.Label, nil }),
		boolColumn("normative", func(b *classesBatch, _ *scratch) []bool { return b.Normative }),
		count("tools", func(b *classesBatch) []int64 { return b.Tools }),
		float64Column("percent", func(b *classesBatch) []float64 { return b.Percent }),
		opt("required", func(b *classesBatch) *optInt64s { return &b.Required }),
		count("published_tools", func(b *classesBatch) []int64 { return b.PublishedTools }),
		float64Column("published_percent", func(b *classesBatch) []float64 { return b.PublishedPercent }),
		opt("published_required", func(b *classesBatch) *optInt64s { return &b.PublishedRequired }),
		count("delta_tools", func(b *classesBatch) []int64 { return b.Delta }),
		opt("delta_required", func(b *classesBatch) *optInt64s { return &b.DeltaRequired }),
	}
}

// changesColumns is the schema of changes.parquet: change (added, removed,
// changed), server_id, tool, name_ordinal (among the tools of that name on
// that server), old_ordinal and new_ordinal (the tool's ordinal in each
// run's tools.parquet, null on the side without it), both definition
// hashes, then old_<class>, new_<class>, old_<class>_required and
// new_<class>_required.
func changesColumns() []column[ChangesBatch] {
	opt := func(name string, c func(*ChangesBatch) *optInt64s) column[ChangesBatch] {
		return countColumn(name, true, func(b *ChangesBatch, _ *scratch) ([]int64, []int16) { return c(b).get() })
	}
	cols := []column[ChangesBatch]{
		stringColumn("change", false, func(b *ChangesBatch) (*StringColumn, []int32) { return &b.Change, nil }),
		stringColumn("server_id", true, func(b *ChangesBatch) (*StringColumn, []int32) { return &b.ServerID, nil }),
		stringColumn("tool", true, func(b *ChangesBatch) (*StringColumn, []int32) { return &b.Tool, nil }),
		countColumn("name_ordinal", false, func(b *ChangesBatch, _ *scratch) ([]int64, []int16) { return b.NameOrdinal, nil }),
		opt("old_ordinal", func(b *ChangesBatch) *optInt64s { return &b.OldOrdinal }),
		opt("new_ordinal", func(b *ChangesBatch) *optInt64s { return &b.NewOrdinal }),
		hashColumn("old_definition_sha256", true, func(b *ChangesBatch) ([]Hash, []bool) { return b.OldDef, b.HasOld }),
		hashColumn("new_definition_sha256", true, func(b *ChangesBatch) ([]Hash, []bool) { return b.NewDef, b.HasNew }),
	}
	for _, g := range []struct {
		prefix, suffix string
		sets           func(*ChangesBatch) []classify.Set
	}{
		{"old_", "", func(b *ChangesBatch) []classify.Set { return b.Old }},
		{"new_", "", func(b *ChangesBatch) []classify.Set { return b.New }},
		{"old_", "_required", func(b *ChangesBatch) []classify.Set { return b.OldReq }},
		{"new_", "_required", func(b *ChangesBatch) []classify.Set { return b.NewReq }},
	} {
		var names []string
		for _, n := range labelColumns(classBits, g.suffix) {
			names = append(names, g.prefix+n)
		}
		cols = append(cols, boolGroup(names, classBits, g.sets)...)
	}
	return cols
}
