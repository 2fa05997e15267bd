package census

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// canonGen generates JSON texts, most of them valid, on the edges where
// the canonicaliser's fast path could part from its general path: keys in
// and out of canonical order, repeated keys (also after keys in order),
// keys whose UTF-16 order is not their UTF-8 byte order, keys with a
// common prefix of eight bytes and more, escapes in keys and strings,
// numbers around 2^53 and in every spelling, whitespace, nesting up to
// and past MaxDepth, and texts broken by a cut or a changed byte.
type canonGen struct {
	r *rand.Rand
}

func (g *canonGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// canonKeys are decoded keys; key writes one raw, sometimes escaped.
var canonKeys = []string{
	"a", "b", "c", "aa", "ab", "", "type", "description", "name", "properties",
	"inputSchema", "input_schema", "é", "e", "ｚ", "\uff61", "\U00010000", "😀", "\ue000", "\uffff",
	"abcdefgh", "abcdefgh1", "abcdefgh2", "abcdefghé", "abcdefg", "abcdefgé", "abcdefg\x00", "a\x00", "\x00",
	"a\"b", "a\\b", "a/b", "x\ny", "\u2028", "\x7f", "zzzzzzzzzzzz",
}

// keyText writes the decoded key k as a JSON string, escaping with
// varying spellings when esc is set; lone surrogates come as escapes.
func (g *canonGen) keyText(k string, esc bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range k {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			b.WriteString(`\u` + strings.Repeat("0", 4-len(strconv.FormatInt(int64(r), 16))) + strconv.FormatInt(int64(r), 16))
		case esc && r == '/':
			b.WriteString(`\/`)
		case esc && g.r.IntN(2) == 0:
			for _, u := range utf16.Encode([]rune{r}) {
				h := strconv.FormatInt(int64(u), 16)
				if g.r.IntN(2) == 0 {
					h = strings.ToUpper(h)
				}
				b.WriteString(`\u` + strings.Repeat("0", 4-len(h)) + h)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (g *canonGen) ws() string {
	if g.r.IntN(3) == 0 {
		return g.pick(" ", "\t", "\n", "\r", "  ", " \r\n")
	}
	return ""
}

var canonNumbers = []string{
	"0", "-0", "1", "-1", "7", "42", "-17", "1.0", "-1.0", "0.5", "1.5", "-0.0", "0.0", "0e0", "1e2", "1E+2", "1e-2",
	"12.34e-2", "0.1", "0.000001", "0.0000001", "1e20", "1e21", "100000000000000000000", "1000000000000000000000",
	"999999999999999", "1000000000000000", "9007199254740991", "9007199254740992", "9007199254740993",
	"-9007199254740992", "-9007199254740993", "9999999999999999", "1234567890123456", "12345678901234567",
	"123456789012345678901234567890", "5e-324", "2.4e-324", "1.7976931348623157e308", "1e400", "-1e400",
	"NaN", "Infinity", "-Infinity",
}

func (g *canonGen) str() string {
	return g.pick(`"plain"`, `""`, `"caf\u00e9"`, `"café"`, `"a\"b"`, `"\\"`, `"\/"`, `"a\/b"`, `"\b\f\n\r\t"`,
		`"\u0000\u001f\u007f"`, `"\u2028\u2029"`, `"\ud800"`, `"\udc00"`, `"\ud83d\ude00"`, `"\ud83d\ud83d\ude00"`,
		`"\ude00\ud83d"`, `"\uD800\uDC00"`, `"x\ud800"`, `"😀"`, `"ｚ"`, `"\"\\\/"`, `"a long string of plain ascii text"`)
}

func (g *canonGen) value(depth int) string {
	switch n := g.r.IntN(10); {
	case depth > 4 || n < 3:
		return g.scalar()
	case n < 7:
		return g.object(depth + 1)
	default:
		k := g.r.IntN(5)
		parts := make([]string, k)
		for i := range parts {
			parts[i] = g.value(depth + 1)
		}
		return "[" + g.ws() + strings.Join(parts, g.ws()+","+g.ws()) + g.ws() + "]"
	}
}

func (g *canonGen) scalar() string {
	switch g.r.IntN(4) {
	case 0:
		return g.str()
	case 1:
		return g.pick("true", "false", "null")
	}
	return g.pick(canonNumbers...)
}

// object writes members whose keys come in canonical order, in reverse,
// at random, or in order with one repeated at the end.
func (g *canonGen) object(depth int) string {
	n := g.r.IntN(7)
	if g.r.IntN(8) == 0 {
		n += 16 // past the insertion sort
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = g.pick(canonKeys...)
		if g.r.IntN(6) == 0 {
			keys[i] += strconv.Itoa(g.r.IntN(30))
		}
	}
	byUnits := func(a, b string) int { return slices.Compare(utf16Of(a), utf16Of(b)) }
	switch g.r.IntN(4) {
	case 0:
		slices.SortFunc(keys, byUnits)
		keys = slices.CompactFunc(keys, func(a, b string) bool { return a == b })
	case 1:
		slices.SortFunc(keys, byUnits)
		keys = slices.CompactFunc(keys, func(a, b string) bool { return a == b })
		slices.Reverse(keys)
	case 2:
		slices.SortFunc(keys, byUnits)
		keys = slices.CompactFunc(keys, func(a, b string) bool { return a == b })
		if len(keys) > 0 {
			keys = append(keys, keys[g.r.IntN(len(keys))])
		}
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = g.keyText(k, g.r.IntN(4) == 0) + g.ws() + ":" + g.ws() + g.value(depth)
	}
	return "{" + g.ws() + strings.Join(parts, g.ws()+","+g.ws()) + g.ws() + "}"
}

// text is a whole input: a value with whitespace around it, now and then
// broken.
func (g *canonGen) text() []byte {
	var s string
	if g.r.IntN(3) == 0 {
		s = g.toolText()
	} else {
		s = g.value(0)
	}
	b := []byte(g.ws() + s + g.ws())
	switch g.r.IntN(12) {
	case 0:
		b = b[:g.r.IntN(len(b)+1)]
	case 1:
		b[g.r.IntN(len(b))] = g.pick(`"`, `\`, `,`, `:`, `}`, `]`, `{`, `[`, `0`, `-`, `.`, `e`, "\x01", "\xff", "\xed", " ", "\v")[0]
	case 2:
		i := g.r.IntN(len(b) + 1)
		b = slices.Insert(b, i, []byte(g.pick(`,`, `"`, `\u12`, `0`, "\xc3", "\u00a0", `}`, `NaN`))...)
	}
	return b
}

// toolText is a tool object whose inputSchema and input_schema are
// present, absent, null, repeated or of another type.
func (g *canonGen) toolText() string {
	members := []string{`"name": "t"`, `"description": "d"`}
	for range g.r.IntN(3) {
		k := g.pick("inputSchema", "input_schema", "input\\u0053chema")
		v := g.pick("null", `"text"`, "[]", "{}")
		if g.r.IntN(2) == 0 {
			v = g.object(1)
		}
		members = append(members, `"`+k+`": `+v)
	}
	g.r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return "{" + strings.Join(members, ", ") + "}"
}

// canonBoth runs one path of AppendCanonical and of AppendCanonicalTool.
type canonResult struct {
	out, tool []byte
	a, b      int
	err, terr string
}

func canonPath(general bool, in []byte) canonResult {
	c := &canonicalizer{general: general}
	var r canonResult
	out, err := c.run([]byte("pre"), in)
	r.out = out
	if err != nil {
		r.err = err.Error()
	}
	tool, a, b, err := c.tool([]byte("pre"), in)
	r.tool, r.a, r.b = tool, a, b
	if err != nil {
		r.terr = err.Error()
	}
	return r
}

// diffPaths says how the fast path's results differ from the general
// path's on in, or "".
func diffPaths(in []byte) string {
	g, f := canonPath(true, in), canonPath(false, in)
	switch {
	case g.err != f.err || g.terr != f.terr:
		return "errors: general " + strconv.Quote(g.err) + " " + strconv.Quote(g.terr) + ", fast " + strconv.Quote(f.err) + " " + strconv.Quote(f.terr)
	case !bytes.Equal(g.out, f.out):
		return "canonical form: general " + strconv.Quote(string(g.out)) + ", fast " + strconv.Quote(string(f.out))
	case !bytes.Equal(g.tool, f.tool):
		return "tool form: general " + strconv.Quote(string(g.tool)) + ", fast " + strconv.Quote(string(f.tool))
	case g.a != f.a || g.b != f.b:
		return "schema range: general " + strconv.Itoa(g.a) + ":" + strconv.Itoa(g.b) + ", fast " + strconv.Itoa(f.a) + ":" + strconv.Itoa(f.b)
	case g.err != "" && string(f.out) != "pre":
		return "dst changed on an error: " + strconv.Quote(string(f.out))
	}
	return ""
}

// tookFast says whether the fast path canonicalised in itself rather
// than leaving it to the general path.
func tookFast(in []byte) bool {
	c := &canonicalizer{}
	c.lx.data = in
	_, ok := c.tape(nil)
	return ok
}

// TestCanonicalPaths holds the fast path to the general one on generated
// texts and on the other tests' inputs: the same bytes, the same schema
// range, the same error with dst unchanged. It also requires that the
// fast path takes the valid texts it is meant for, so that the
// comparison is not of the general path with itself.
func TestCanonicalPaths(t *testing.T) {
	var ins [][]byte
	for _, s := range canonicalHostile() {
		ins = append(ins, []byte(s))
	}
	for _, c := range trickyCases() {
		ins = append(ins, []byte(c.line))
	}
	ins = append(ins,
		[]byte(nest("[", "]", MaxDepth, "")), []byte(nest("[", "]", MaxDepth+1, "")),
		[]byte(nest(`{"a":`, "}", MaxDepth, "1")), []byte(nest(`{"a":`, "}", MaxDepth+1, "1")),
		[]byte(nest(`{"a":`, "}", MaxDepth-1, "{}")), []byte(nest(`{"a":`, "}", MaxDepth, "{}")),
		[]byte("["+strings.Repeat("9", MaxIntDigits)+"]"), []byte("["+strings.Repeat("9", MaxIntDigits+1)+"]"),
	)
	g := &canonGen{r: rand.New(rand.NewPCG(3, 4))}
	for range 6000 {
		ins = append(ins, g.text())
	}
	valid, fast := 0, 0
	for _, in := range ins {
		if d := diffPaths(in); d != "" {
			t.Fatalf("%s\ninput %q", d, in)
		}
		if _, err := AppendCanonical(nil, in); err == nil {
			valid++
			if tookFast(in) {
				fast++
			}
		}
	}
	// The fast path leaves no valid text to the general path.
	if fast != valid {
		t.Errorf("the fast path took %d of %d valid texts", fast, valid)
	}
	t.Logf("%d texts, %d valid, %d of them by the fast path", len(ins), valid, fast)
}

// TestCanonicalFastTakes lists valid texts the fast path must take itself.
func TestCanonicalFastTakes(t *testing.T) {
	for _, in := range []string{
		`{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":1,"b":2,"a":3}`, `{"\u0062":1,"a":2}`, `{"ｚ":1,"😀":2,"\uff61":3,"\ud800":4}`,
		`[-0,1.0,1e2,9007199254740993,123456789012345678901234567890,0.1]`, ` { "a" : [ "\u00e9\/" ] } `,
		`"just a string"`, `42`, `true`, `null`, `[]`, `{}`, nest(`{"a":`, "}", MaxDepth, "1"),
		`{"inputSchema": {"b": 1, "a": {}}, "name": "n", "input_schema": null}`, `[NaN,-Infinity,{"a":Infinity}]`,
	} {
		if !tookFast([]byte(in)) {
			t.Errorf("the fast path left %q to the general path", in)
		}
		if d := diffPaths([]byte(in)); d != "" {
			t.Errorf("%s\ninput %q", d, in)
		}
	}
}

// FuzzCanonicalPaths holds the fast path to the general one on arbitrary
// bytes, as TestCanonicalPaths does on generated ones.
func FuzzCanonicalPaths(f *testing.F) {
	for _, s := range canonicalHostile() {
		if len(s) < 4096 {
			f.Add([]byte(s))
		}
	}
	g := &canonGen{r: rand.New(rand.NewPCG(5, 6))}
	for range 200 {
		f.Add(g.text())
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if d := diffPaths(in); d != "" {
			t.Fatalf("%s\ninput %q", d, in)
		}
	})
}

// TestAppendCanonicalToolExtra: text after a whole tool object is an
// error, and the schema's range noted before it was found is not used.
func TestAppendCanonicalToolExtra(t *testing.T) {
	for _, general := range []bool{false, true} {
		c := &canonicalizer{general: general}
		out, a, b, err := c.tool([]byte("pre"), []byte(`{"inputSchema": {"a": [1, 2, 3]}} x`))
		if err == nil || err.Error() != "Extra data at byte 34" || string(out) != "pre" || a != 0 || b != 0 {
			t.Errorf("general %v: %q %d:%d %v", general, out, a, b, err)
		}
	}
}

// TestCanonicalLong: a text past tapeLimit takes the general path, with
// the same result.
func TestCanonicalLong(t *testing.T) {
	long := []byte(`{"b":"` + strings.Repeat("x", tapeLimit) + `","a":[1,2.50]}`)
	if tookFast(long) {
		t.Error("the fast path took a text past tapeLimit")
	}
	got, err := AppendCanonical(nil, long)
	want := `{"a":[1,2.5],"b":"` + strings.Repeat("x", tapeLimit) + `"}`
	if err != nil || string(got) != want {
		t.Errorf("got %.40q..., %v", got, err)
	}
	if !tookFast([]byte(`{"b":"` + strings.Repeat("x", tapeLimit-30) + `","a":[1,2.50]}`)) {
		t.Error("the fast path left a short text to the general path")
	}
}

// TestAppendShort holds appendShort to append at the edges of its move:
// ranges of 0 to 20 bytes, near the end of data, into buffers with and
// without sixteen bytes of room.
func TestAppendShort(t *testing.T) {
	data := []byte("0123456789abcdefghijklmnopqrstuv")
	for a := 0; a <= len(data); a++ {
		for b := a; b <= len(data) && b-a <= 20; b++ {
			for _, room := range []int{0, 1, 15, 16, 40} {
				dst := make([]byte, 3, 3+(b-a)+room)
				copy(dst, "pre")
				got := appendShort(dst, data, int32(a), int32(b))
				if want := "pre" + string(data[a:b]); string(got) != want {
					t.Fatalf("[%d:%d] room %d: %q, want %q", a, b, room, got, want)
				}
			}
		}
	}
}
