package tables

import (
	"io"
	"math/rand/v2"
	"testing"
)

// benchChunks fills the batches of rows in chunks of 2,000 tools, as the
// run's workers hand them to the writers.
func benchChunks(r *tableRows) (tools []*ToolsBatch, props []*PropertiesBatch) {
	const chunk = 2000
	for first := 0; first < len(r.tools); first += chunk {
		tb, pb := &ToolsBatch{}, &PropertiesBatch{}
		for i, v := range r.tools[first:min(len(r.tools), first+chunk)] {
			tb.AppendServerID(bytesOf(v.server), v.server != nil)
			tb.Name.AppendNullable(bytesOf(v.name), v.name != nil)
			tb.Line = append(tb.Line, v.line)
			tb.Properties = append(tb.Properties, v.count)
			tb.Labels = append(tb.Labels, v.labels)
			tb.Required = append(tb.Required, v.required)
			tb.CamelCase = append(tb.CamelCase, v.added[0])
			tb.WordSplit = append(tb.WordSplit, v.added[1])
			tb.Deep = append(tb.Deep, v.added[2])
			tb.Definition = append(tb.Definition, v.def)
			tb.Schema = append(tb.Schema, v.schema)
			tb.HasSchema = append(tb.HasSchema, v.hasSchema)
			tb.NameOrdinal = append(tb.NameOrdinal, int64((first+i)%3))
			for _, p := range r.props[v.firstProp:v.lastProp] {
				pb.ToolOrdinal = append(pb.ToolOrdinal, int64(i))
				pb.Name.Append([]byte(p.name))
				pb.Where.Append([]byte(p.where))
				pb.Required = append(pb.Required, p.required)
				pb.Labels = append(pb.Labels, p.labels)
			}
		}
		tools, props = append(tools, tb), append(props, pb)
	}
	return tools, props
}

// BenchmarkWriters writes tools.parquet and properties.parquet of 200,000
// generated tools (about 800,000 properties) from ready batches: the
// writers' own cost, column building, encoding and compression.
func BenchmarkWriters(b *testing.B) {
	rows := genRows(rand.New(rand.NewPCG(5, 6)), 200_000)
	tools, props := benchChunks(rows)
	b.Run("tools", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w, err := NewToolsWriter(io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			for _, tb := range tools {
				if err := w.Append(tb); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("properties", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w, err := NewPropertiesWriter(io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			first := int64(0)
			for i, pb := range props {
				if err := w.Append(pb, tools[i], first); err != nil {
					b.Fatal(err)
				}
				first += int64(tools[i].Len())
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
