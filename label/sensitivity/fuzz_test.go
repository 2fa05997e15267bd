package sensitivity_test

import (
	"bytes"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/jsonref"
	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
	"github.com/atlas-reproduce/atlas-reproduce/label/sensitivity"
)

// literalAdded is what the variants add to a tool, computed as the
// definitions read: every property classified with its rewritten name and
// its description, the deep walk over the reference parser's values.
func literalAdded(t *census.Tool, schema *jsonref.Value) sensitivity.Added {
	var base, camel, camelReq, words, wordsReq classify.Set
	for i := range t.Properties {
		p := &t.Properties[i]
		base |= classify.PropertyBytes(p.Name, p.Description)
		c := classify.PropertyBytes(sensitivity.CamelCase(nil, p.Name), p.Description)
		w := classify.PropertyBytes(sensitivity.WordSplit(nil, p.Name), p.Description)
		camel |= c
		words |= w
		if p.Required {
			camelReq |= c
			wordsReq |= w
		}
	}
	base &= classify.Classes
	m := func(s classify.Set) classify.Set { return s &^ base & classify.Classes }
	return sensitivity.Added{
		CamelCase: m(camel), CamelCaseRequired: m(camelReq),
		WordSplit: m(words), WordSplitRequired: m(wordsReq),
		Deep: m(refDeep(schema, 0)),
	}
}

// FuzzAnalyzer holds the one-pass walk over the schema text, and the
// shortcut of classifying rewritten names alone, to the literal definitions
// over census's reference parser.
func FuzzAnalyzer(f *testing.F) {
	for _, l := range fixedLines() {
		f.Add(l)
	}
	g := newSchemaGen(3)
	for i := range 50 {
		f.Add(g.line(i))
	}
	dec := census.NewDecoder()
	var a sensitivity.Analyzer
	var deep sensitivity.Deep
	f.Fuzz(func(t *testing.T, line []byte) {
		if census.IsBlank(line) {
			return
		}
		rec, err := dec.Decode(line)
		if err != nil {
			return
		}
		schemas, err := refToolSchemas(line)
		if err != nil || len(schemas) != len(rec.Tools) {
			t.Fatalf("reference parser: %v, %d schemas for %d tools", err, len(schemas), len(rec.Tools))
		}
		for ti := range rec.Tools {
			tool := &rec.Tools[ti]
			var base classify.Set
			for i := range tool.Properties {
				base |= classify.PropertyBytes(tool.Properties[i].Name, tool.Properties[i].Description)
			}
			want := literalAdded(tool, schemas[ti])
			if got := a.Tool(tool, base); got != want {
				t.Fatalf("tool %d: Analyzer %+v, literal %+v\nschema %s", ti, got, want, tool.Schema)
			}
			if tool.Schema != nil {
				if got, want := deep.Labels(tool.Schema), refDeep(schemas[ti], 0); got != want {
					t.Fatalf("tool %d: Deep.Labels %v, reference walk %v\nschema %s", ti, got, want, tool.Schema)
				}
				checkTape(t, &deep, tool)
			}
		}
	})
}

func TestAnalyzerMatchesLiteralOnSynthetic(t *testing.T) {
	g := newSchemaGen(77)
	dec := census.NewDecoder()
	var a sensitivity.Analyzer
	n := 0
	for i := range 3000 {
		line := g.line(i)
		rec, err := dec.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		schemas, err := refToolSchemas(line)
		if err != nil {
			t.Fatal(err)
		}
		for ti := range rec.Tools {
			tool := &rec.Tools[ti]
			var base classify.Set
			for i := range tool.Properties {
				base |= classify.PropertyBytes(tool.Properties[i].Name, tool.Properties[i].Description)
			}
			want := literalAdded(tool, schemas[ti])
			if got := a.Tool(tool, base); got != want {
				t.Fatalf("line %d tool %d: Analyzer %+v, literal %+v\n%s", i, ti, got, want, line)
			}
			if want.Any() {
				n++
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d tools gain anything", n)
	}
}

// checkTape holds the deep walk over the decoder's tape to the walk over
// the text, where tool has a tape. It writes tool's canonical form from the
// tape first, as the pipeline does, so that the decoder keeps taping.
func checkTape(t *testing.T, deep *sensitivity.Deep, tool *census.Tool) bool {
	t.Helper()
	if _, _, _, err := census.AppendCanonicalDecoded(nil, tool); err != nil {
		t.Fatal(err)
	}
	got, ok := deep.BeyondTape(tool)
	if !ok {
		return false
	}
	if want := deep.Beyond(tool.Schema); got != want {
		t.Fatalf("Deep.BeyondTape %v, Deep.Beyond %v\nschema %s", got, want, tool.Schema)
	}
	return true
}

// TestBeyondTapeMatchesText holds the tape walk to the text walk on every
// tool of the fixed, synthetic and real schemas that has a tape.
func TestBeyondTapeMatchesText(t *testing.T) {
	g := newSchemaGen(91)
	lines := fixedLines()
	for i := range 3000 {
		lines = append(lines, g.line(i))
	}
	lines = append(lines, bytes.Split(realcorpus.MustRead(t), []byte("\n"))...)
	dec := census.NewDecoder()
	var deep sensitivity.Deep
	taped, deepSets, tools := 0, 0, 0
	for _, line := range lines {
		if census.IsBlank(line) {
			continue
		}
		rec, err := dec.Decode(line)
		if err != nil {
			continue // the fixed cases include bad lines
		}
		for ti := range rec.Tools {
			tool := &rec.Tools[ti]
			if tool.Schema == nil {
				continue
			}
			tools++
			if checkTape(t, &deep, tool) {
				taped++
				if deep.Beyond(tool.Schema) != 0 {
					deepSets++
				}
			}
		}
	}
	// Nearly every tool is taped; enough of them hide properties for the
	// comparison to mean something.
	t.Logf("%d of %d tools taped, %d with deep labels", taped, tools, deepSets)
	if taped < tools*9/10 || deepSets < 100 {
		t.Fatalf("%d of %d tools taped, %d with deep labels", taped, tools, deepSets)
	}
}
