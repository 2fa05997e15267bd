package label_test

import (
	"errors"
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/label"
)

// Classify one tool schema, as a gateway would before it lets a call
// through: the same labels and the same JSON object as `atlas-reproduce
// classify`.
func ExampleLabeller_ClassifyDocument() {
	tool := []byte(`{"name": "run_query", "description": "Run SQL on the warehouse",
		"inputSchema": {"type": "object", "required": ["sql"], "properties": {
			"sql": {"type": "string", "description": "the statement"},
			"api_key": {"type": "string"}}}}`)
	l := label.NewLabeller()
	err := l.ClassifyDocument(tool, "tool.json", func(_ label.Origin, t *label.ToolLabels) error {
		fmt.Println("classes:", t.Classes, "required:", t.RequiredClasses)
		fmt.Println(string(t.AppendJSON(nil)))
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// classes: [gg:command-string gg:credential-value] required: [gg:command-string]
	// {"server_id": null, "tool": "run_query", "classes": ["gg:command-string", "gg:credential-value"], "required_classes": ["gg:command-string"], "buckets": [], "properties": [{"name": "sql", "where": "properties", "required": true, "classes": ["gg:command-string"], "buckets": []}, {"name": "api_key", "where": "properties", "required": false, "classes": ["gg:credential-value"], "buckets": []}]}
}

// Label a tools/list result, as a gateway or proxy sees it from an MCP
// server, with what the non-normative sensitivity variants would add: the
// camelCase name clientSecret carries no class under the spec's rule.
func ExampleLabeller_ClassifyBody() {
	result := []byte(`{"tools": [
		{"name": "fetch", "inputSchema": {"properties": {"url": {"type": "string"}}, "required": ["url"]}},
		{"name": "login", "inputSchema": {"properties": {"clientSecret": {"type": "string"}}}}]}`)
	l := label.NewLabeller().WithSensitivity()
	err := l.ClassifyBody(result, func(t *label.ToolLabels) error {
		fmt.Println(*t.Tool, t.Classes, t.RequiredClasses, "camel_case adds", t.Sensitivity.CamelCase.Classes)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// fetch [gg:url-endpoint] [gg:url-endpoint] camel_case adds []
	// login [] [] camel_case adds [gg:credential-value]
}

// Label a tools/list result in one call, and find where a bad document
// breaks.
func ExampleDocument() {
	tools, err := label.Document([]byte(`{"tools": [
		{"name": "exec", "inputSchema": {"properties": {"command": {"type": "string"}}, "required": ["command"]}},
		{"name": "echo", "inputSchema": {"properties": {"text": {"type": "string"}}}}]}`))
	if err != nil {
		fmt.Println(err)
	}
	for _, t := range tools {
		fmt.Println(*t.Tool, t.Classes, t.RequiredClasses)
	}

	_, err = label.Document([]byte(`{"name": "exec", "inputSchema": {"properties": {]}}`))
	var de *label.DecodeError
	if errors.As(err, &de) {
		fmt.Println("bad input at byte", de.Offset, "-", err)
	}
	// Output:
	// exec [gg:command-string] [gg:command-string]
	// echo [] []
	// bad input at byte 48 - Expecting property name enclosed in double quotes at byte 48
}
