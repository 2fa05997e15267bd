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
	// SHA256Prefix is the first 32 hex digits of the definition_sha256
	// (the run counts definitions by their first 16 bytes, to keep its
	// memory small): DuckDB's
	// starts_with(lower(hex(definition_sha256)), '…') finds
	// its tools.
	SHA256Prefix string `json:"definition_sha256_prefix"`
	// Tool is the name of the first tool in file order with this
	// definition (every tool of a definition has one name, unless the
	// definition is unnamed); empty when none was found.
	Tool    string `json:"tool,omitempty"`
	Servers int64  `json:"servers"`
	Tools   int64  `json:"tools"`
}

func (d *Definitions) writeMarkdown(p func(string, ...any)) {
	p("\n## Tool definitions\n\n")
	p("Tools are hashed as served (`definition_sha256`: the whole tool object in canonical JSON, RFC 8785; `schema_sha256`: its input schema alone), so that key order and whitespace do not count. In `tools.parquet` both are 32-byte binaries (`BLOB` in DuckDB): `lower(hex(definition_sha256))` prints the hex digits, `unhex(sha256(x))` joins them to DuckDB's own hashes.\n\n")
	p("| | Count |\n|---|---:|\n")
	p("| Distinct definitions | %s |\n| Definitions served by more than one server | %s |\n", group(d.Distinct), group(d.Shared))
	p("| Distinct input schemas | %s (of %s tools with an object schema) |\n", group(d.DistinctSchemas), group(d.ToolsWithSchema))
	if len(d.MostShared) == 0 {
		return
	}
	p("\nMost shared definitions (`SELECT * FROM 'tools.parquet' WHERE starts_with(lower(hex(definition_sha256)), '…')` lists their tools):\n\n")
	p("| Tool | definition_sha256 (first 32 digits) | Servers | Tools |\n|---|---|---:|---:|\n")
	for _, s := range d.MostShared {
		p("| %s | `%s` | %s | %s |\n", mdCode(s.Tool), s.SHA256Prefix, group(s.Servers), group(s.Tools))
	}
}
