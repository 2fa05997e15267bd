package census

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// decodedCases are census lines whose tools test AppendCanonicalDecoded
// where trusting the decoder could go wrong: escapes that hide quotes
// and backslashes, \u escapes and surrogates, non-ASCII keys and text,
// every literal and number spelling, duplicate keys, the schema alias,
// nesting at MaxDepth, texts past tapeLimit, and each record shape.
func decodedCases() []string {
	tool := func(body string) string { return `{"server_id":"s","tools":[` + body + `]}` }
	long := strings.Repeat("x", tapeLimit)
	return []string{
		tool(`{"name":"a\"}],\\","description":"q\\\"{[\\\\","inputSchema":{"properties":{"q\"}":{"description":"\\\\\"]}"}}}}`),
		tool(`{"inputSchema":{"\u0062":1,"a\u0000":2,"a\\":3,"a\/":4,"\ud83d\ude00":5,"\uff61":6,"\ud800":7,"\udc00x":8}}`),
		tool(`{"n\u00e9":"é😀\u2028","name":"名前","description":"é\ud800\ud800\udc00"}`),
		tool(`{"inputSchema":{"a":[true,false,null,NaN,Infinity,-Infinity,-0,0,1.0,1e400,-1e400,1E2,1e-7,0.000001,1e21,9007199254740993,` + strings.Repeat("9", MaxIntDigits) + `]}}`),
		tool(`{"inputSchema":{"b":1,"a":2,"b":3,"a":{"y":1,"x":2,"y":3}},"name":"n","inputSchema":{"z":[],"a":{}}}`),
		tool(`{"inputSchema":null,"input_schema":{"z":1,"y":-0}},{"input_schema":{"a":1},"inputSchema":null},{"inputSchema":"text","input_schema":{"a":1}}`),
		tool(`{"name":"deep","inputSchema":` + nest(`{"a":`, "}", MaxDepth-3, "1") + `}`),
		tool(`{"name":"deepArr","x":` + nest(`[`, "]", MaxDepth-3, "") + `}`),
		tool(`{"name":"long","description":"` + long + `","inputSchema":{"b":"\u00e9","a":1}}`),
		tool(`{"name":"longKey","inputSchema":{"` + long[:tapeLimit/2] + `\u0041":1,"` + long[:tapeLimit/2] + `@":2}}`),
		tool(`{}, { } ,{"a" : [ ] , "b" : { } }`),
		` {"server_id":"s","tool": {"annotations": {"x": [ 1 , 2 ]}, "inputSchema": {"k": "v"}} } `,
		`{"server_id":"s","name":"flat","description":"d","inputSchema":{"properties":{"p":{"type":"string"}}}}`,
	}
}

// diffDecoded says how AppendCanonicalDecoded differs from
// AppendCanonicalTool on t, from the decoder's tape when t has one and
// from its text, or "".
func diffDecoded(t *Tool) string {
	want, wa, wb, werr := AppendCanonicalTool([]byte("pre"), t.Raw)
	untaped := *t
	untaped.tape = toolTape{}
	for _, tool := range []*Tool{t, &untaped} {
		got, ga, gb, gerr := AppendCanonicalDecoded([]byte("pre"), tool)
		switch {
		case werr != nil || gerr != nil:
			return "errors: " + errString(werr) + ", decoded " + errString(gerr)
		case !bytes.Equal(got, want):
			return "canonical form: " + string(want) + ", decoded " + string(got)
		case ga != wa || gb != wb:
			return "schema range differs"
		}
	}
	return ""
}

// hasTape says whether AppendCanonicalDecoded writes t from its
// decoder's tape.
func hasTape(t *Tool) bool {
	_, _, _, ok := new(canonicalizer).taped(nil, t)
	return ok
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// checkDecodedLine decodes line, in one pass and streamed in two, and
// holds AppendCanonicalDecoded to AppendCanonicalTool on each tool; it
// reports how many tools it compared and how many of them from the tape.
func checkDecodedLine(t *testing.T, d *Decoder, line []byte) (n, taped int) {
	t.Helper()
	// Most lines here fail after their tools were taped, which the
	// decoder would count as tapes not used and rest (TestTapeRests):
	// keep it taping.
	d.tapeUse.rest = 0
	for _, twoPass := range []bool{false, true} {
		if _, err := d.stream(line, twoPass); err != nil {
			return n, taped
		}
		for {
			tool, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			if tool == nil {
				break
			}
			n++
			if hasTape(tool) {
				taped++
			}
			if diff := diffDecoded(tool); diff != "" {
				t.Fatalf("%s\ntool %q", diff, tool.Raw)
			}
		}
	}
	return n, taped
}

// TestDecodedCanonical holds AppendCanonicalDecoded to AppendCanonicalTool
// on the tools of the cases above, of the decoder's tricky cases and of
// generated tool texts, and requires that it compared tools, including
// tools the trusted tape takes itself.
func TestDecodedCanonical(t *testing.T) {
	d := NewDecoder()
	var lines []string
	lines = append(lines, decodedCases()...)
	for _, c := range append(trickyCases(), streamCases()...) {
		lines = append(lines, c.line)
	}
	g := &canonGen{r: rand.New(rand.NewPCG(7, 8))}
	for range 3000 {
		lines = append(lines, `{"tools":[`+g.toolText()+`,`+g.value(2)+`]}`, `{"tool":`+g.toolText()+`}`)
	}
	compared, taped := 0, 0
	for _, l := range lines {
		n, tn := checkDecodedLine(t, d, []byte(l))
		compared, taped = compared+n, taped+tn
	}
	// Half the tools come by the two passes, which tape none.
	if compared < 6000 || taped < compared*2/5 {
		t.Errorf("%d tools compared, %d of them from the tape", compared, taped)
	}
	// Each case above decodes: none is compared with nothing.
	for _, l := range decodedCases() {
		if _, err := NewDecoder().Decode([]byte(l)); err != nil {
			t.Errorf("case does not decode: %v\n%.200s", err, l)
		}
	}
}

// TestDecodedTakesTape: the decoder tapes every tool object it parses of
// a line shorter than tapeLineLimit, and the trusted tape takes valid tool texts
// itself (else the comparisons above would be of the general path with
// itself), leaving only those past tapeLimit to the general path.
func TestDecodedTakesTape(t *testing.T) {
	for _, l := range decodedCases() {
		rec, err := NewDecoder().Decode([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		for i := range rec.Tools {
			// A flat record is the tool; the decoder tapes tool objects.
			if want := rec.Shape != ShapeFlat; hasTape(&rec.Tools[i]) != want {
				t.Errorf("tape of %.80q: %v, want %v", rec.Tools[i].Raw, !want, want)
			}
		}
		for _, tool := range rec.Tools {
			c := &canonicalizer{trusted: true}
			c.lx.data = tool.Raw
			_, ok := c.tape(nil)
			if want := len(tool.Raw) <= tapeLimit; ok != want {
				t.Errorf("trusted tape took %.80q: %v, want %v", tool.Raw, ok, want)
			}
		}
	}
}

// TestTrustedString: trustedString ends a string where scanString does,
// with the same escape flag, on valid strings, and stops at the end of a
// text that has no closing quote.
func TestTrustedString(t *testing.T) {
	for _, s := range []string{
		`""`, `"a"`, `"abcdefgh"`, `"abcdefg\""`, `"\\"`, `"\\\\"`, `"a\\\"b"`, `"\u0022"`, `"\u005c"`,
		`"é😀\u2028"`, `"` + strings.Repeat("ab", 20) + `\n"`, `"1234567\\"`, `"12345678\\\"9"`,
	} {
		for _, tail := range []string{"", `,"x"]`, `            `} {
			in := []byte(s + tail)
			end, esc, err := scanString(in, 0)
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			gend, gesc, ok := trustedString(in, 0)
			if !ok || gend != end || gesc != esc {
				t.Errorf("%q: trustedString = %d %v %v, scanString %d %v", in, gend, gesc, ok, end, esc)
			}
		}
	}
	for _, s := range []string{`"`, `"abc`, `"abcdefghijkl\"`, `"\`} {
		if end, _, ok := trustedString([]byte(s), 0); ok || end > len(s) {
			t.Errorf("%q: trustedString = %d %v, want false within the text", s, end, ok)
		}
	}
}

// FuzzDecodedCanonical holds AppendCanonicalDecoded to AppendCanonicalTool
// on the tools of every line the decoder accepts.
func FuzzDecodedCanonical(f *testing.F) {
	for _, l := range decodedCases() {
		if len(l) < 4096 {
			f.Add([]byte(l))
		}
	}
	for _, c := range trickyCases() {
		if len(c.line) < 4096 {
			f.Add([]byte(c.line))
		}
	}
	g := &canonGen{r: rand.New(rand.NewPCG(9, 10))}
	for range 100 {
		f.Add([]byte(`{"tools":[` + g.toolText() + `]}`))
	}
	d := NewDecoder()
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecodedLine(t, d, line)
		if d := diffTrusted(line); d != "" {
			t.Fatalf("%s\ninput %q", d, line)
		}
	})
}

// diffTrusted says how the trusted canonicaliser differs from the
// checking one on in, a text of any JSON value, or "" (also when in is
// not valid, which the trusted one is not for).
func diffTrusted(in []byte) string {
	want := canonPath(false, in)
	if want.err != "" {
		return ""
	}
	c := &canonicalizer{trusted: true}
	out, err := c.run([]byte("pre"), in)
	tool, a, b, terr := c.tool([]byte("pre"), in)
	switch {
	case err != nil || terr != nil:
		return "trusted errors: " + errString(err) + " " + errString(terr)
	case !bytes.Equal(out, want.out):
		return "canonical form: " + string(want.out) + ", trusted " + string(out)
	case !bytes.Equal(tool, want.tool) || a != want.a || b != want.b:
		return "tool form: " + string(want.tool) + ", trusted " + string(tool)
	}
	return ""
}

// TestTrustedPaths holds the trusted canonicaliser to the checking one on
// the valid texts of TestCanonicalPaths' generator and hostile cases.
func TestTrustedPaths(t *testing.T) {
	var ins [][]byte
	for _, s := range canonicalHostile() {
		ins = append(ins, []byte(s))
	}
	for _, s := range decodedCases() {
		ins = append(ins, []byte(s))
	}
	g := &canonGen{r: rand.New(rand.NewPCG(11, 12))}
	for range 6000 {
		ins = append(ins, g.text())
	}
	valid := 0
	for _, in := range ins {
		if d := diffTrusted(in); d != "" {
			t.Fatalf("%s\ninput %q", d, in)
		}
		if _, err := AppendCanonical(nil, in); err == nil {
			valid++
		}
	}
	if valid < len(ins)/2 {
		t.Errorf("only %d of %d texts valid", valid, len(ins))
	}
}

// TestTapeNotUsed: a tool goes without the tape, and is still written
// right from its text, where the tape is not its: after its decoder has
// moved to another line, when its Raw is another copy of the text, when
// it came from memory (RememberTools), from a line Stream reads in two
// passes, or from a line past tapeLineLimit.
func TestTapeNotUsed(t *testing.T) {
	line := []byte(`{"tools":[{"name":"a","inputSchema":{"b":1,"a":[2.50,"\u00e9"]}},{"name":"a","inputSchema":{"b":1,"a":[2.50,"\u00e9"]}}]}`)
	d := NewDecoder()
	rec, err := d.Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	first := rec.Tools[0]
	if !hasTape(&first) {
		t.Fatal("no tape for a decoded tool")
	}
	moved := first
	moved.Raw = bytes.Clone(first.Raw)
	if hasTape(&moved) {
		t.Error("the tape taken for a copy of Raw")
	}
	if _, err := d.Decode([]byte(`{"tools":[{"name":"other","x":[3,2,1]}]}`)); err != nil {
		t.Fatal(err)
	}
	if hasTape(&first) {
		t.Error("the tape taken after the decoder moved to the next line")
	}
	for _, tool := range []*Tool{&first, &moved} {
		if diff := diffDecoded(tool); diff != "" {
			t.Error(diff)
		}
	}

	mem := NewDecoder()
	mem.RememberTools()
	rec, err = mem.Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Tools[1].Text == (TextID{}) || hasTape(&rec.Tools[1]) || !hasTape(&rec.Tools[0]) {
		t.Error("want the first tool taped, the second from memory without a tape")
	}
	for i := range rec.Tools {
		if diff := diffDecoded(&rec.Tools[i]); diff != "" {
			t.Error(diff)
		}
	}

	long := []byte(`{"tools":[{"name":"` + strings.Repeat("x", tapeLineLimit) + `","b":1,"a":2}]}`)
	rec, err = d.Decode(long)
	if err != nil {
		t.Fatal(err)
	}
	if hasTape(&rec.Tools[0]) {
		t.Error("a line past tapeLineLimit was taped")
	}
	if diff := diffDecoded(&rec.Tools[0]); diff != "" {
		t.Error(diff)
	}
	if _, err := d.stream(line, true); err != nil {
		t.Fatal(err)
	}
	for {
		tool, err := d.Next()
		if err != nil || tool == nil {
			break
		}
		if hasTape(tool) {
			t.Error("a tool of a two-pass line was taped")
		}
	}
}

// TestTapedDepth: the tape's loop, reading what the decoder skips, fails
// where the decoder's Skip fails, at MaxDepth counted from the line's
// top, for a tool in "tools" (two containers deep) and in "tool" (one),
// with the error ReferenceDecode gives; the tools it accepts are taped.
func TestTapedDepth(t *testing.T) {
	d := NewDecoder()
	for _, shape := range []struct {
		pre, post string
		depth     int // containers around the tool object
	}{
		{`{"tools":[`, `]}`, 2},
		{`{"tool":`, `}`, 1},
	} {
		for _, nestIn := range []struct{ open, close, inner string }{{"[", "]", ""}, {`{"a":`, "}", "1"}} {
			for k := MaxDepth - shape.depth - 3; k <= MaxDepth-shape.depth+1; k++ {
				// The tool's own object and k containers in its "x".
				line := []byte(shape.pre + `{"name":"n","x":` + nest(nestIn.open, nestIn.close, k, nestIn.inner) + `,"inputSchema":{"b":1,"a":2}}` + shape.post)
				got, err := d.Decode(line)
				want, werr := ReferenceDecode(line)
				if diff := diffRecords(got, err, want, werr); diff != "" {
					t.Fatalf("depth %d+1+%d: %s", shape.depth, k, diff)
				}
				if valid := shape.depth+1+k <= MaxDepth; (err == nil) != valid {
					t.Fatalf("depth %d+1+%d: error %v", shape.depth, k, err)
				}
				if err != nil {
					continue
				}
				if !hasTape(&got.Tools[0]) {
					t.Errorf("depth %d+1+%d: no tape", shape.depth, k)
				}
				if diff := diffDecoded(&got.Tools[0]); diff != "" {
					t.Errorf("depth %d+1+%d: %s", shape.depth, k, diff)
				}
			}
		}
	}
}

// TestTapeRests: a decoder whose tools are not written from the tape
// stops taping after a window of tapeWindow tools, for tapeRest tools,
// then tapes again; one whose tools are keeps taping.
func TestTapeRests(t *testing.T) {
	line := []byte(`{"tools":[{"name":"a","inputSchema":{"b":1,"a":2}}]}`)
	decode := func(d *Decoder, canonical bool) bool {
		rec, err := d.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		tool := &rec.Tools[0]
		taped := hasTape(tool)
		if canonical {
			if diff := diffDecoded(tool); diff != "" {
				t.Fatal(diff)
			}
		}
		return taped
	}
	idle := NewDecoder()
	for i := range tapeWindow + tapeRest + 1 {
		want := i < tapeWindow || i == tapeWindow+tapeRest
		if got := decode(idle, false); got != want {
			t.Fatalf("tool %d of a decoder whose tapes are not used: taped %v, want %v", i, got, want)
		}
	}
	busy := NewDecoder()
	for i := range 3*tapeWindow + 1 {
		if !decode(busy, true) {
			t.Fatalf("tool %d of a decoder whose tapes are used: not taped", i)
		}
	}
	// A quarter of a window used is enough.
	some := NewDecoder()
	for i := range 3*tapeWindow + 1 {
		if !decode(some, i%4 == 0) {
			t.Fatalf("tool %d of a decoder with a quarter of its tapes used: not taped", i)
		}
	}
	// A line of more tools than a window, all written after the line is
	// decoded, as the run writes them.
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range 2 * tapeWindow {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"t","inputSchema":{"b":1,"a":2}}`)
	}
	b.WriteString(`]}`)
	long := NewDecoder()
	for i := range 3 {
		rec, err := long.Decode([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		for j := range rec.Tools {
			if !hasTape(&rec.Tools[j]) {
				t.Fatalf("line %d, tool %d of lines longer than a window: not taped", i, j)
			}
			if _, _, _, err := AppendCanonicalDecoded(nil, &rec.Tools[j]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestTapeConcurrent: the tools of one line are written from the tape on
// several goroutines at once, each as AppendCanonicalTool writes it (run
// with -race to see that the tape is only read).
func TestTapeConcurrent(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range 64 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","inputSchema":{"b":%d,"a":"\u00e9%d","c":[3,2,1.0]}}`, i, i, i)
	}
	b.WriteString(`]}`)
	rec, err := NewDecoder().Decode([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]string, len(rec.Tools))
	for i := range rec.Tools {
		if !hasTape(&rec.Tools[i]) {
			t.Fatalf("tool %d: no tape", i)
		}
		wg.Go(func() {
			want, _, _, _ := AppendCanonicalTool(nil, rec.Tools[i].Raw)
			got, _, _, err := AppendCanonicalDecoded(nil, &rec.Tools[i])
			if err != nil || !bytes.Equal(got, want) {
				errs[i] = fmt.Sprintf("tool %d: %s, %v; want %s", i, got, err, want)
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
}
