package census_test

import (
	"fmt"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
)

// Decode one line of server_tools.jsonl as the spec's Python reference reads
// it: the server id, each tool, and each enumerated property with its
// place in the schema and whether it is required.
func ExampleDecoder_Decode() {
	line := []byte(`{"server_id": "srv-1", "tools": [{"name": "read_file",
		"inputSchema": {"type": "object", "required": ["path"],
		"properties": {"path": {"type": "string", "description": "file to read"},
		"path": {"type": "string", "description": "the last duplicate key wins"}},
		"$defs": {"Opts": {"properties": {"encoding": {"type": "string"}}}}}}]}`)
	dec := census.NewDecoder()
	rec, err := dec.Decode(line)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("shape %s, server %s\n", rec.Shape, rec.ServerID)
	for _, t := range rec.Tools {
		fmt.Printf("tool %s\n", t.Name)
		for _, p := range t.Properties {
			fmt.Printf("  %s (%s) required=%v: %q\n", p.Name, p.WhereString(), p.Required, p.Description)
		}
	}

	// A line that is not valid JSON names the byte where it goes wrong.
	_, err = dec.Decode([]byte(`{"server_id": "srv-2", "tools": [}`))
	fmt.Println(err)
	// Output:
	// shape server, server srv-1
	// tool read_file
	//   path (properties) required=true: "the last duplicate key wins"
	//   encoding ($defs/Opts) required=false: ""
	// Expecting value at byte 33
}
