package report

// Definitions are the census's distinct tool definitions and input schemas,
// by their hashes (definition_sha256 and schema_sha256 in tools.parquet):
// many servers are deployments of one package and serve the same tools.
type Definitions struct {
	// Distinct is the number of distinct definitions among the tools.
	Distinct int64 `json:"distinct"`
	// DistinctSchemas is the number of distinct input schemas among the
	// ToolsWithSchema tools that have an object schema.
	DistinctSchemas int64 `json:"distinct_schemas"`
	ToolsWithSchema int64 `json:"tools_with_schema"`
	// Shared is the number of definitions served by more than one server.
	Shared int64 `json:"shared"`
	// MostShared are the definitions served by the most servers (ties by
	// tools, then by hash), at most MostSharedN of them, each served by
	// two servers or more.
	MostShared []SharedDefinition `json:"most_shared"`
}

// MostSharedN is how many of the most shared definitions a report lists.
const MostSharedN = 10

// SharedDefinition is one definition and how widely it is served.
type SharedDefinition struct {
	SHA256  string `json:"definition_sha256"`
	Servers int64  `json:"servers"`
	Tools   int64  `json:"tools"`
	// Example is the tools.parquet ordinal of the first tool with it.
	Example int64 `json:"example_ordinal"`
}

func (d *Definitions) writeMarkdown(p func(string, ...any)) {
	p("\n## Tool definitions\n\n")
	p("Tools are hashed as served (`definition_sha256`: the whole tool object in canonical JSON, RFC 8785; `schema_sha256`: its input schema alone), so that key order and whitespace do not count.\n\n")
	p("| | Count |\n|---|---:|\n")
	p("| Distinct definitions | %d |\n| Definitions served by more than one server | %d |\n", d.Distinct, d.Shared)
	p("| Distinct input schemas | %d (of %d tools with an object schema) |\n", d.DistinctSchemas, d.ToolsWithSchema)
	if len(d.MostShared) == 0 {
		return
	}
	p("\nMost shared definitions (`SELECT * FROM 'tools.parquet' WHERE definition_sha256 = '…'` lists their tools):\n\n")
	p("| definition_sha256 | Servers | Tools | Example ordinal |\n|---|---:|---:|---:|\n")
	for _, s := range d.MostShared {
		p("| `%s` | %d | %d | %d |\n", s.SHA256, s.Servers, s.Tools, s.Example)
	}
}
