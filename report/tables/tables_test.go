package tables

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// tableRows is a census's rows as plain values, to build batches from and
// to compare what the Parquet reader gives back with.
type tableRows struct {
	tools []toolValues
	props []propValues
}

type toolValues struct {
	server, name        *string
	line                int64
	count               int32
	labels, required    classify.Set
	added               [3]classify.Set // camel_case, word_split, deep
	def, schema         Hash
	hasSchema           bool
	firstProp, lastProp int
}

type propValues struct {
	name, where string
	required    bool
	labels      classify.Set
}

// genRows makes tools in runs of one server (as the census has them), with
// null server ids and names, invalid UTF-8, and enough rows for several row
// groups.
func genRows(rng *rand.Rand, tools int) *tableRows {
	r := &tableRows{}
	str := func(s string) *string { return &s }
	var server *string
	for i := 0; i < tools; i++ {
		if i == 0 || rng.IntN(20) == 0 {
			server = str(fmt.Sprintf("https://srv-%d.example/mcp", rng.IntN(tools/10+1)))
			if rng.IntN(30) == 0 {
				server = nil
			}
		}
		t := toolValues{server: server, name: str(fmt.Sprintf("tool_%d", rng.IntN(500))), line: int64(i/3 + 1), labels: classify.Set(rng.Uint32()) & (classify.Classes | classify.Buckets)}
		t.required = t.labels & classify.Classes & classify.Set(rng.Uint32())
		for j := range t.def {
			t.def[j], t.schema[j] = byte(rng.Uint32()), byte(rng.Uint32())
		}
		// Past the first row group, definitions repeat, as a census's
		// do: that row group's hash columns take a dictionary.
		if i >= toolsGroupRows {
			t.def, t.schema = Hash{byte(rng.IntN(40)), 1}, Hash{byte(rng.IntN(30)), 2}
		}
		t.hasSchema = rng.IntN(7) != 0
		for v := range t.added {
			t.added[v] = classify.Classes &^ t.labels & classify.Set(rng.Uint32())
		}
		switch rng.IntN(50) {
		case 0:
			t.name = nil
		case 1:
			t.name = str("bad\xffname\xed\xa0\x80")
		}
		t.firstProp = len(r.props)
		for range rng.IntN(9) {
			p := propValues{name: fmt.Sprintf("p%d", rng.IntN(300)), where: "properties", required: rng.IntN(3) == 0,
				labels: classify.Set(rng.Uint32()) & (classify.Classes | classify.Buckets)}
			switch rng.IntN(10) {
			case 0:
				p.where = "$defs/Item"
			case 1:
				p.where = "definitions/Q\xff"
			}
			r.props = append(r.props, p)
		}
		t.lastProp = len(r.props)
		t.count = int32(t.lastProp - t.firstProp)
		r.tools = append(r.tools, t)
	}
	return r
}

// fill appends rows [first, end) to tools and their properties to
// properties, as a worker fills the batches of its chunk.
func (r *tableRows) fill(tools *ToolsBatch, properties *PropertiesBatch, first, end int) {
	for i, v := range r.tools[first:end] {
		tools.AppendServerID(bytesOf(v.server), v.server != nil)
		tools.Name.AppendNullable(bytesOf(v.name), v.name != nil)
		tools.Line = append(tools.Line, v.line)
		tools.Properties = append(tools.Properties, v.count)
		tools.Labels = append(tools.Labels, v.labels)
		tools.Required = append(tools.Required, v.required)
		tools.CamelCase = append(tools.CamelCase, v.added[0])
		tools.WordSplit = append(tools.WordSplit, v.added[1])
		tools.Deep = append(tools.Deep, v.added[2])
		tools.Definition = append(tools.Definition, v.def)
		tools.Schema = append(tools.Schema, v.schema)
		tools.HasSchema = append(tools.HasSchema, v.hasSchema)
		tools.NameOrdinal = append(tools.NameOrdinal, int64((first+i)%3))
		for _, p := range r.props[v.firstProp:v.lastProp] {
			properties.ToolOrdinal = append(properties.ToolOrdinal, int64(i))
			properties.Name.Append([]byte(p.name))
			properties.Where.Append([]byte(p.where))
			properties.Required = append(properties.Required, p.required)
			properties.Labels = append(properties.Labels, p.labels)
		}
	}
}

// write writes the rows in chunks of the given sizes, as the runner does.
func (r *tableRows) write(t *testing.T, chunk func() int) (toolsPq, propsPq []byte) {
	t.Helper()
	return r.writeWith(t, fastWriters, chunk)
}

// writeWith writes the rows as write does, with the writers of w.
func (r *tableRows) writeWith(t *testing.T, w writers, chunk func() int) (toolsPq, propsPq []byte) {
	t.Helper()
	var tb, pb bytes.Buffer
	tw, err := w.tools(&tb)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := w.props(&pb)
	if err != nil {
		t.Fatal(err)
	}
	var tools ToolsBatch
	var properties PropertiesBatch
	for first := 0; first < len(r.tools); {
		end := min(len(r.tools), first+chunk())
		tools.Reset()
		properties.Reset()
		r.fill(&tools, &properties, first, end)
		if err := tw.Append(&tools); err != nil {
			t.Fatal(err)
		}
		if err := pw.Append(&properties, &tools, int64(first)); err != nil {
			t.Fatal(err)
		}
		first = end
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	return tb.Bytes(), pb.Bytes()
}

func bytesOf(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

// readTable reads a whole file back through pqarrow, as a user's tools do,
// into one Go value per cell (nil for a null).
func readTable(t *testing.T, data []byte) (map[string][]any, []string, *file.Reader) {
	t.Helper()
	f, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	cols := map[string][]any{}
	var names []string
	for i := 0; i < int(tbl.NumCols()); i++ {
		name := tbl.Schema().Field(i).Name
		names = append(names, name)
		for _, chunk := range tbl.Column(i).Data().Chunks() {
			for j := 0; j < chunk.Len(); j++ {
				var v any
				if !chunk.IsNull(j) {
					switch a := chunk.(type) {
					case *array.String:
						v = a.Value(j)
					case *array.Int64:
						v = a.Value(j)
					case *array.Int32:
						v = a.Value(j)
					case *array.Boolean:
						v = a.Value(j)
					case *array.FixedSizeBinary:
						v = hex.EncodeToString(a.Value(j))
					default:
						t.Fatalf("column %s has type %T", name, chunk)
					}
				}
				cols[name] = append(cols[name], v)
			}
		}
	}
	return cols, names, f
}

// TestTablesRoundTrip writes tools and properties in chunks of random
// sizes, reads them back with the Arrow reader and compares every cell;
// other chunkings must give the same bytes.
func TestTablesRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows := genRows(rng, 3*toolsGroupRows/2)
	toolsPq, propsPq := rows.write(t, func() int { return 1 + rng.IntN(3000) })

	for i, chunk := range []func() int{func() int { return 1 }, func() int { return len(rows.tools) }, func() int { return toolsGroupRows - 1 }} {
		tb, pb := rows.write(t, chunk)
		if !bytes.Equal(tb, toolsPq) || !bytes.Equal(pb, propsPq) {
			t.Errorf("chunking %d gives other bytes", i)
		}
	}

	valid := func(s *string) any {
		if s == nil {
			return nil
		}
		return string(bytes.ToValidUTF8([]byte(*s), []byte("\uFFFD")))
	}
	classCols := []string{"credential_value", "filesystem_path", "command_string", "money_amount", "url_endpoint"}
	tools, names, f := readTable(t, toolsPq)
	wantNames := []string{"server_id", "tool", "ordinal", "name_ordinal", "line", "property_count", "definition_sha256", "schema_sha256"}
	wantNames = append(wantNames, classCols...)
	for _, c := range classCols {
		wantNames = append(wantNames, c+"_required")
	}
	wantNames = append(wantNames, "raw_content_blob", "account_identity")
	for _, variant := range []string{"camel_case", "word_split", "deep"} {
		for _, c := range classCols {
			wantNames = append(wantNames, variant+"_"+c)
		}
	}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("tools.parquet columns %v, want %v", names, wantNames)
	}
	if f.NumRowGroups() != 2 || f.NumRows() != int64(len(rows.tools)) {
		t.Fatalf("tools.parquet: %d row groups, %d rows", f.NumRowGroups(), f.NumRows())
	}
	// The hash columns are 32-byte binaries, with a dictionary only where
	// hashes repeat (the second row group).
	for _, name := range []string{"definition_sha256", "schema_sha256"} {
		ci := f.MetaData().Schema.ColumnIndexByName(name)
		if c := f.MetaData().Schema.Column(ci); c.PhysicalType() != parquet.Types.FixedLenByteArray || c.TypeLength() != len(Hash{}) {
			t.Errorf("%s is %s of length %d, want FIXED_LEN_BYTE_ARRAY(32)", name, c.PhysicalType(), c.TypeLength())
		}
		for rg, want := range []bool{false, true} {
			cc, err := f.MetaData().RowGroup(rg).ColumnChunk(ci)
			if err != nil {
				t.Fatal(err)
			}
			if cc.HasDictionaryPage() != want {
				t.Errorf("%s, row group %d: dictionary page %v, want %v", name, rg, cc.HasDictionaryPage(), want)
			}
		}
	}
	for i, v := range rows.tools {
		var schemaHex any
		if v.hasSchema {
			schemaHex = hex.EncodeToString(v.schema[:])
		}
		want := []any{valid(v.server), valid(v.name), int64(i), int64(i % 3), v.line, v.count, hex.EncodeToString(v.def[:]), schemaHex}
		for _, set := range []classify.Set{v.labels, v.required} {
			for _, b := range classBits {
				want = append(want, set&b != 0)
			}
		}
		want = append(want, v.labels&classify.RawContentBlob != 0, v.labels&classify.AccountIdentity != 0)
		for _, set := range v.added {
			for _, b := range classBits {
				want = append(want, set&b != 0)
			}
		}
		for c, name := range names {
			if tools[name][i] != want[c] {
				t.Fatalf("tools row %d column %s = %v, want %v", i, name, tools[name][i], want[c])
			}
		}
	}

	props, names, f := readTable(t, propsPq)
	wantNames = append([]string{"server_id", "tool", "tool_ordinal", "property", "location", "required"}, classCols...)
	wantNames = append(wantNames, "raw_content_blob", "account_identity")
	if !slices.Equal(names, wantNames) {
		t.Fatalf("properties.parquet columns %v, want %v", names, wantNames)
	}
	if f.NumRows() != int64(len(rows.props)) || f.NumRowGroups() < 2 {
		t.Errorf("properties.parquet: %d row groups, %d rows, want %d rows", f.NumRowGroups(), f.NumRows(), len(rows.props))
	}
	// The strings are dictionary-encoded, the ordinals delta-encoded.
	rg := f.MetaData().RowGroup(0)
	for c, enc := range map[int]parquet.Encoding{0: parquet.Encodings.RLEDict, 3: parquet.Encodings.RLEDict, 2: parquet.Encodings.DeltaBinaryPacked} {
		cc, err := rg.ColumnChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(cc.Encodings(), enc) {
			t.Errorf("properties.parquet column %d encodings %v, want %v among them", c, cc.Encodings(), enc)
		}
	}
	row := 0
	for o, v := range rows.tools {
		for _, p := range rows.props[v.firstProp:v.lastProp] {
			want := []any{valid(v.server), valid(v.name), int64(o), p.name, valid(&p.where), p.required}
			for _, b := range append(slices.Clone(classBits), bucketBits...) {
				want = append(want, p.labels&b != 0)
			}
			for c, name := range names {
				if props[name][row] != want[c] {
					t.Fatalf("properties row %d column %s = %v, want %v", row, name, props[name][row], want[c])
				}
			}
			row++
		}
	}
}
