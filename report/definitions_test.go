package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestDefinitionsSections requires the definitions figures in every
// human output, and no section for a report without them.
func TestDefinitionsSections(t *testing.T) {
	defs := &Definitions{Distinct: 1234567, DistinctSchemas: 7654321, ToolsWithSchema: 9999991, Shared: 4242,
		MostShared: []SharedDefinition{{SHA256Prefix: "0123456789abcdef0123456789abcdef", Tool: "read_file", Servers: 1313, Tools: 1317}}}
	for _, tc := range []struct {
		name  string
		write func(*Report, *bytes.Buffer) error
		want  []string
	}{
		{"markdown", func(r *Report, b *bytes.Buffer) error { return r.WriteMarkdown(b) },
			[]string{"## Tool definitions", "| Distinct definitions | 1,234,567 |", "| `read_file` | `0123456789abcdef0123456789abcdef` | 1,313 | 1,317 |", "7,654,321 (of 9,999,991"}},
		{"html", func(r *Report, b *bytes.Buffer) error { return r.WriteHTML(b) },
			[]string{`<section id="definitions">`, `<td><code>read_file</code></td><td class="hash">0123456789abcdef0123456789abcdef</td><td class="n">1,313</td><td class="n">1,317</td>`, "1,234,567", "4,242"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sampleReport(true)
			var without bytes.Buffer
			if err := tc.write(r, &without); err != nil {
				t.Fatal(err)
			}
			r.Definitions = defs
			var with bytes.Buffer
			if err := tc.write(r, &with); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(with.String(), w) {
					t.Errorf("no %q in the output", w)
				}
				if strings.Contains(without.String(), w) {
					t.Errorf("%q without definitions", w)
				}
			}
		})
	}
}
