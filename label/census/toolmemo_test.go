package census

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
)

// rememberer decodes with a remembering Decoder kept across lines, in one
// pass or (twoPass) as Stream's second pass decodes, copying what Next
// gives; it also checks that the TextIDs it sees name texts consistently.
type rememberer struct {
	d       *Decoder
	twoPass bool
	ids     map[TextID][]byte
	// shared counts tools that came with a TextID seen before: tools taken
	// from memory rather than parsed.
	shared int
}

func newRememberer(twoPass bool) *rememberer {
	d := NewDecoder()
	d.RememberTools()
	return &rememberer{d: d, twoPass: twoPass, ids: map[TextID][]byte{}}
}

func (r *rememberer) decode(t *testing.T, line []byte) (*Record, error) {
	t.Helper()
	var rec *Record
	var err error
	if r.twoPass {
		rec, err = streamDecode(r.d, line, true)
	} else {
		rec, err = r.d.Decode(line)
	}
	if err != nil {
		return rec, err
	}
	for i := range rec.Tools {
		tl := &rec.Tools[i]
		if tl.Text == (TextID{}) {
			continue
		}
		if seen, ok := r.ids[tl.Text]; ok {
			r.shared++
			if !bytes.Equal(seen, tl.Raw) {
				t.Fatalf("TextID %v named %q and now %q", tl.Text, seen, tl.Raw)
			}
		} else {
			r.ids[tl.Text] = bytes.Clone(tl.Raw)
		}
	}
	return rec, nil
}

// repeatLines are lines in which tool texts recur: within a line, across
// lines, as "tool" (depth 1) and as elements of "tools" (depth 2), with
// escapes in their strings, and followed by bytes that break the line, or
// cut off inside a remembered text.
func repeatLines(g *lineGen, n int) [][]byte {
	var tools []string
	for range 40 {
		tools = append(tools, g.obj(g.r.IntN(5), genToolKeys, g.toolMember))
	}
	tools = append(tools,
		`{"name":"read_file","description":"Read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"Path to read"}},"required":["path"]}}`,
		`{"name":"read_file","description":"Read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"Path to read"},"mode":{}},"required":["path"]}}`,
		`{"name":"w\u0072ite","description":"","inputSchema":{"properties":{"p\u00e5th":{"description":"\ud800 x"},"":{}},"$defs":{"D":{"properties":{"url":{}},"required":["url"]}},"required":["p\u00e5th"]}}`,
		`{"name":"short"}`, `{}`, `{"inputSchema":null,"input_schema":{"properties":{"a":{}}}}`,
	)
	pick := func() string { return tools[g.r.IntN(len(tools))] }
	var lines [][]byte
	for range n {
		var line string
		switch g.r.IntN(6) {
		case 0:
			line = `{"server_id":"s","tool":` + pick() + `}`
		case 1:
			// A remembered text cut short, or followed by a break.
			tl := pick()
			line = `{"tools":[` + pick() + `,` + tl[:g.r.IntN(len(tl)+1)]
			if g.r.IntN(2) == 0 {
				line += g.pick(`]}`, `}]}`, `,]}`, ` x`, "\x01", `"`)
			}
		default:
			k := 1 + g.r.IntN(5)
			parts := make([]string, k)
			for i := range parts {
				parts[i] = pick()
				if g.r.IntN(8) == 0 {
					parts[i] = g.any(2)
				}
			}
			line = g.ws() + `{"tools":[` + strings.Join(parts, g.pick(",", " , ", ",\n")) + `],"url":` + g.scalar() + `}`
		}
		lines = append(lines, []byte(line))
	}
	return lines
}

// TestRememberMatchesDecode: a remembering Decoder gives every line what a
// plain one gives (errors, tools, offsets), in one pass and in two, and
// what ReferenceDecode gives; the repeated tools were taken from memory.
func TestRememberMatchesDecode(t *testing.T) {
	g := &lineGen{r: rand.New(rand.NewPCG(41, 42))}
	var lines [][]byte
	for _, c := range append(trickyCases(), streamCases()...) {
		lines = append(lines, []byte(c.line))
	}
	// One text nested to just within MaxDepth as "tool" and just beyond
	// it as an element of "tools", and the other way round.
	for k := MaxDepth - 4; k <= MaxDepth; k++ {
		deep := `{"name":"deep","x":` + strings.Repeat("[", k) + strings.Repeat("]", k) + `}`
		for _, l := range []string{`{"tool":` + deep + `}`, `{"tools":[` + deep + `]}`, `{"tool":` + deep + `}`} {
			lines = append(lines, []byte(l))
		}
	}
	lines = append(lines, realcorpus.Lines(t)...)
	lines = append(lines, realcorpus.Lines(t)...) // every real tool again
	lines = append(lines, censusLines(200)...)
	lines = append(lines, repeatLines(g, 6000)...)
	for range 2000 {
		lines = append(lines, []byte(g.record()))
	}
	plain := NewDecoder()
	one, two := newRememberer(false), newRememberer(true)
	for i, line := range lines {
		if IsBlank(line) {
			continue
		}
		want, werr := ReferenceDecode(line)
		got, err := plain.Decode(line)
		if diff := diffRecords(got, err, want, werr); diff != "" {
			t.Fatalf("line %d: plain Decode: %s\nline %q", i, diff, line)
		}
		var offsets []int
		if err == nil {
			for _, tl := range got.Tools {
				offsets = append(offsets, tl.Offset)
			}
		}
		rec, rerr := one.decode(t, line)
		if diff := diffRecords(rec, rerr, want, werr); diff != "" {
			t.Fatalf("line %d: remembering Decode: %s\nline %q", i, diff, line)
		}
		if rerr == nil {
			for j, tl := range rec.Tools {
				if tl.Offset != offsets[j] {
					t.Fatalf("line %d tool %d: offset %d, want %d", i, j, tl.Offset, offsets[j])
				}
			}
		}
		rec, rerr = two.decode(t, line)
		if diff := diffRecords(rec, rerr, want, werr); diff != "" {
			t.Fatalf("line %d: remembering Stream: %s\nline %q", i, diff, line)
		}
	}
	for _, r := range []*rememberer{one, two} {
		if r.shared < len(lines)/2 {
			t.Errorf("two passes %v: only %d tools of %d lines came from memory", r.twoPass, r.shared, len(lines))
		}
	}
}

// TestRememberFullMidLine fills the memory in the middle of a line whose
// first tools came from it: they stay intact, and the memory starts
// afresh at the next line.
func TestRememberFullMidLine(t *testing.T) {
	big := func(i int) string {
		return fmt.Sprintf(`{"name":"t%d","description":"%s","inputSchema":{"properties":{"p\u0061th%d":{"description":"d\u00e9"}}}}`,
			i, strings.Repeat("x", memoMaxTool-200), i)
	}
	first := `{"name":"f\u0069rst","inputSchema":{"properties":{"ur\u006c":{"description":"the url"}},"required":["url"]}}`
	r := newRememberer(false)
	plain := NewDecoder()
	parts := []string{first}
	for i := range memoBytes / memoMaxTool {
		parts = append(parts, big(i))
	}
	lines := [][]byte{
		[]byte(`{"tools":[` + first + `]}`),
		[]byte(`{"tools":[` + strings.Join(parts, ",") + `]}`),
		[]byte(`{"tools":[` + first + `,` + big(0) + `]}`),
	}
	for i, line := range lines {
		want, werr := plain.Decode(line)
		wantOut := toOut(line, func([]byte) (*Record, error) { return want, werr })
		got, err := r.decode(t, line)
		if diff := diffRecords(got, err, want, werr); diff != "" {
			t.Fatalf("line %d: %s", i, diff)
		}
		if i == 1 && !r.d.memo.full {
			t.Fatalf("line 1 did not fill the memory")
		}
		// Render after the whole line: a tool given early must not have
		// been overwritten by what the memory took in later.
		if gotOut := toOut(line, func([]byte) (*Record, error) { return got, err }); !reflect.DeepEqual(gotOut, wantOut) {
			t.Fatalf("line %d: tools changed after they were given", i)
		}
	}
	if r.shared == 0 {
		t.Fatal("no tool came from memory")
	}
	if r.d.memo.full || len(r.d.memo.entries) == 0 {
		t.Fatalf("the memory did not start afresh: full %v, %d entries", r.d.memo.full, len(r.d.memo.entries))
	}
}

// TestRememberRests: where tools never repeat, the memory rests (tools
// come without a TextID) and the decoding is unchanged; where they repeat
// again, it remembers again.
func TestRememberRests(t *testing.T) {
	r := newRememberer(false)
	plain := NewDecoder()
	line := func(i int) []byte {
		return fmt.Appendf(nil, `{"tools":[{"name":"tool %d","inputSchema":{"properties":{"a%d":{}}}}]}`, i, i)
	}
	rested, n := 0, memoWarm+memoRest+4*memoWindow
	for i := range n {
		l := line(i)
		want, werr := plain.Decode(l)
		got, err := r.decode(t, l)
		if diff := diffRecords(got, err, want, werr); diff != "" {
			t.Fatalf("line %d: %s", i, diff)
		}
		if got.Tools[0].Text == (TextID{}) {
			rested++
		}
	}
	if rested < memoRest {
		t.Fatalf("%d of %d distinct tools went unremembered, want the memory to rest for %d", rested, n, memoRest)
	}
	before := r.shared
	for i := range 3 * memoWindow {
		if _, err := r.decode(t, line(i%10)); err != nil {
			t.Fatal(err)
		}
	}
	if r.shared-before < memoWindow {
		t.Fatalf("after the rest only %d repeated tools came from memory", r.shared-before)
	}
}

// TestTextResults: a value is kept per TextID and forgotten when the
// memory starts afresh; tools without a TextID are passed over.
func TestTextResults(t *testing.T) {
	r := newRememberer(false)
	var res TextResults[string]
	line := []byte(`{"tools":[{"name":"a"},{"name":"b"},{"name":"a"}]}`)
	rec, err := r.decode(t, line)
	if err != nil {
		t.Fatal(err)
	}
	a, b, a2 := &rec.Tools[0], &rec.Tools[1], &rec.Tools[2]
	if a.Text != a2.Text || a.Text == b.Text || a.Text == (TextID{}) {
		t.Fatalf("TextIDs %v %v %v: want the two a's alike and b apart", a.Text, b.Text, a2.Text)
	}
	if _, ok := res.Get(a); ok {
		t.Fatal("a value before any was put")
	}
	res.Put(a, "A")
	if v, ok := res.Get(a2); !ok || *v != "A" {
		t.Fatalf("Get(a again) = %v, %v", v, ok)
	}
	if _, ok := res.Get(b); ok {
		t.Fatal("b got a's value")
	}
	none := Tool{Name: []byte("x"), HasName: true}
	res.Put(&none, "X")
	if _, ok := res.Get(&none); ok {
		t.Fatal("a tool without a TextID got a value")
	}
	r.d.memo.clear()
	rec, err = r.decode(t, line)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Get(&rec.Tools[0]); ok {
		t.Fatal("a value outlived the memory's fresh start")
	}
	res.Put(&rec.Tools[1], "B")
	if _, ok := res.Get(&rec.Tools[0]); ok {
		t.Fatal("after a fresh start, a value put for b made a's slot hold one")
	}
}

// fuzzRememberer is one remembering Decoder for a whole fuzzing run.
var fuzzRememberer = func() *Decoder { d := NewDecoder(); d.RememberTools(); return d }()

// FuzzRemember places a fuzzed tool object in lines where it recurs, at
// both depths, cut short and followed by other bytes, and holds a
// remembering Decoder (kept across inputs) to ReferenceDecode.
func FuzzRemember(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","inputSchema":{"properties":{"p":{"description":"d"}},"required":["p"]}}`,
		`{"name":"\u0061","description":"\ud800","inputSchema":{"$defs":{"D":{"properties":{"x":{}}}}}}`,
		`{}`, `{"name":1}`, `{"a":[{"b":{}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tool []byte) {
		s := string(tool)
		for _, line := range []string{
			`{"tools":[` + s + `,` + s + `]}`,
			`{"tool":` + s + `}`,
			`{"tools":[` + s + `]}`,
			`{"tools":[` + s + `,{"x":` + s + `},` + s,
			`{"tools":[` + s + s + `]}`,
			`{"tools":[` + s + `]` + s + `}`,
		} {
			got, err := fuzzRememberer.Decode([]byte(line))
			want, werr := ReferenceDecode([]byte(line))
			if diff := diffRecords(got, err, want, werr); diff != "" {
				t.Fatalf("remembering Decoder and ReferenceDecode differ: %s\nline %q", diff, line)
			}
		}
	})
}

// TestRememberCollision files one tool's memory under another's key, as a
// collision of the 64-bit key would, and requires the other tool to be
// parsed rather than taken from memory.
func TestRememberCollision(t *testing.T) {
	a := []byte(`{"tools":[{"name":"a","inputSchema":{"properties":{"path":{}}}}]}`)
	b := []byte(`{"tools":[{"name":"b","inputSchema":{"properties":{"url":{}}}}]}`)
	r := newRememberer(false)
	if _, err := r.decode(t, a); err != nil {
		t.Fatal(err)
	}
	m := &r.d.memo
	keyOf := func(line []byte) uint64 {
		_, _, key, _ := m.lookup(line, 10, 2)
		return key
	}
	m.heads[keyOf(b)&(memoSlots-1)] = m.heads[keyOf(a)&(memoSlots-1)] // b's chain now starts at a
	got, err := r.decode(t, b)
	want, werr := NewDecoder().Decode(b)
	if diff := diffRecords(got, err, want, werr); diff != "" {
		t.Fatalf("a colliding key gave another tool: %s", diff)
	}
}
