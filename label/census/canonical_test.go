package census

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/atlas-reproduce/atlas-reproduce/internal/jsonref"
	"github.com/atlas-reproduce/atlas-reproduce/internal/realcorpus"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// runCanonicalPy runs testdata/canonical.py over lines and returns its
// answer for each: a canonical text, or "!" and an exception name.
func runCanonicalPy(t *testing.T, lines [][]byte) []string {
	t.Helper()
	py := testenv.Python3(t)
	var in bytes.Buffer
	for i, l := range lines {
		if bytes.IndexByte(l, '\n') >= 0 {
			t.Fatalf("line %d holds a newline; it would split", i)
		}
		in.Write(l)
		in.WriteByte('\n')
	}
	cmd := exec.Command(py, filepath.Join("testdata", "canonical.py"))
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 canonical.py: %v\n%s", err, stderr.Bytes())
	}
	var res []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		res = append(res, sc.Text())
	}
	if len(res) != len(lines) {
		t.Fatalf("python answered %d lines of %d", len(res), len(lines))
	}
	return res
}

// canonicalHostile are values on which a canonical form is easy to get
// wrong: duplicates at depth, escapes, surrogates, key order beyond the
// BMP, numbers at the edges of the double.
func canonicalHostile() []string {
	big := "1" + strings.Repeat("0", MaxIntDigits-1)
	return []string{
		`{"a":1,"a":2}`,
		`{"x":{"k":1,"j":[{"z":1,"z":{"q":1,"q":2}}],"k":3},"x":{"k":{"a":1,"a":[1]},"b":null},"a":{"a":{"a":{"b":1,"a":2,"b":3}}}}`,
		`{"b":1,"\u0062":2,"a":3}`,
		`["\u0000\u0001\u001f\u007f\u0080\u2028\u2029\/\"\\\b\f\n\r\t", "é\u00e9", "a\u0041"]`,
		`["\ud800","\udc00","\ud83d\ude00","\ud83d\ud83d\ude00","\ude00\ud83d","\udbff\udfff","\ud800x","\ud7ff\ue000"]`,
		`{"\ud800":1,"\ud800\ue000":2,"𐀀":3,"\ue000":4,"\uffff":5,"\udc00":6,"a":7,"":8,"\ud7ff":9,"\ud800\u0041":10,"😀":11,"ｚ":12,"é":13,"e":14}`,
		`[1e400,-1e400,1E+400,1e-400,-1e-400,0.1,5e-324,2.5e-324,2.4e-324,1.7976931348623157e308,1.7976931348623159e308]`,
		`[123456789012345678901234567890,-123456789012345678901234567890,9007199254740993,9007199254740992,999999999999999,1000000000000000,-999999999999999,-1000000000000000,18446744073709551616]`,
		`[-0.0,-0,0,0.0,0e0,-0e-5,1.0,1E+2,1e2,100,1.5,-1.5]`,
		`[1e-7,1e-6,0.000001,0.0000001,1.2345e-7,123e-9,1e20,1e21,1e22,123e18,1234567e15,100000000000000000000,1000000000000000000000]`,
		`[0.30000000000000004,0.1e1,12.34e-2,4.35,0.5,2e-1,3.14159265358979323846264338327950288]`,
		`[NaN,Infinity,-Infinity,{"n":NaN}]`,
		"[" + big + ",-" + big + "]",
		"[" + big + ".5," + big + "e-4290]",
		"[1" + strings.Repeat("0", 400) + ",-1" + strings.Repeat("0", 400) + "]",
		" \t{ \"b\" : [ 1 , 2 ] , \"a\" : { } }\r ",
		`{"é":1,"e":2,"😀":3,"ｚ":4,"\u00e9":5}`,
		`"just a string"`, `42`, `true`, `false`, `null`, `[]`, `{}`, `[[],{},[{}]]`,
		nest("[", "]", 500, "1"),
		nest(`{"a":`, "}", 500, `{"b":2,"a":1}`),
		// Refused, as CPython refuses them.
		``, `   `, `{"a":1,}`, `{"a"}`, `[1 2]`, `"abc`, `1 2`, `{"a":1}x`, "\ufeff{}",
		"{\"a\":\"\x01\"}", `{"a":"\x"}`, `["\u12"]`, `[01]`, `[1.]`, `[.5]`, `[-]`, `[+1]`, `nul`,
		"[\"\xff\"]", "[1,\xc3\x28]", "[\"\xed\xa0\x80\"]", "1" + strings.Repeat("0", MaxIntDigits),
		nest("[", "]", 5000, ""),
	}
}

// canonicalLines gathers the differential test's inputs: the hostile
// values, the tricky census lines, generated lines, and every line, tool
// and input schema of the bundled real corpus.
func canonicalLines(t *testing.T) ([]string, [][]byte) {
	var names []string
	var lines [][]byte
	add := func(name string, b []byte) {
		names = append(names, name)
		lines = append(lines, bytes.Clone(b))
	}
	for i, s := range canonicalHostile() {
		add("hostile "+strconv.Itoa(i), []byte(s))
	}
	for _, c := range trickyCases() {
		add("tricky "+c.name, []byte(c.line))
	}
	g := &lineGen{r: rand.New(rand.NewPCG(11, 12))}
	for i := 0; i < 1000; i++ {
		add("generated "+strconv.Itoa(i), []byte(g.record()))
	}
	d := NewDecoder()
	for i, line := range bytes.Split(bytes.TrimSuffix(realcorpus.MustRead(t), []byte{'\n'}), []byte{'\n'}) {
		add("real line "+strconv.Itoa(i+1), line)
		rec, err := d.Decode(line)
		if err != nil {
			t.Fatalf("real line %d: %v", i+1, err)
		}
		for j := range rec.Tools {
			add("real line "+strconv.Itoa(i+1)+" tool "+strconv.Itoa(j), rec.Tools[j].Raw)
			if rec.Tools[j].Schema != nil {
				add("real line "+strconv.Itoa(i+1)+" schema "+strconv.Itoa(j), rec.Tools[j].Schema)
			}
		}
	}
	return names, lines
}

// TestCanonicalPython holds AppendCanonical to the Python reference.
func TestCanonicalPython(t *testing.T) {
	t.Parallel()
	names, lines := canonicalLines(t)
	want := runCanonicalPy(t, lines)
	var buf []byte
	for i, line := range lines {
		var err error
		buf, err = AppendCanonical(buf[:0], line)
		switch {
		case strings.HasPrefix(want[i], "!") && err == nil:
			t.Errorf("%s: Python refuses it (%s), Go gives %q\ninput %q", names[i], want[i], buf, line)
		case !strings.HasPrefix(want[i], "!") && err != nil:
			t.Errorf("%s: Go refuses it (%v), Python gives %q\ninput %q", names[i], err, want[i], line)
		case err == nil && string(buf) != want[i]:
			t.Errorf("%s:\n got %q\nwant %q\ninput %q", names[i], buf, want[i], line)
		}
	}
}

// TestCanonicalExamples pins forms the RFC and ECMAScript spell out.
func TestCanonicalExamples(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"key order and whitespace", `{ "b" : 2, "a" : 1 }`, `{"a":1,"b":2}`},
		{"last duplicate wins", `{"a":1,"b":0,"a":2}`, `{"a":2,"b":0}`},
		{"escaped duplicate", `{"a":1,"\u0061":2}`, `{"a":2}`},
		{"one", `1.0`, `1`},
		{"1e21", `1e21`, `1e+21`},
		{"1e20", `1e20`, `100000000000000000000`},
		{"minus zero", `-0.0`, `0`},
		{"tenth", `0.1`, `0.1`},
		{"smallest", `5e-324`, `5e-324`},
		{"1e-7", `1e-7`, `1e-7`},
		{"1e-6", `0.000001`, `0.000001`},
		{"big int", `123456789012345678901234567890`, `1.2345678901234568e+29`},
		{"overflow", `1e400`, `Infinity`},
		{"nan", `[NaN,-Infinity]`, `[NaN,-Infinity]`},
		{"escapes", `"\u000b\/\u00e9\u2028"`, "\"\\u000b/\u00e9\u2028\""},
		{"lone surrogate", `"\uD800"`, `"\ud800"`},
		{"pair", `"\uD83D\uDE00"`, "\"\U0001F600\""},
		{"utf16 order", `{"\ue000":1,"😀":2}`, "{\"\U0001F600\":2,\"\ue000\":1}"},
		{"surrogate order", `{"\udc00":1,"😀":2}`, "{\"\U0001F600\":2,\"\\udc00\":1}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AppendCanonical([]byte("keep"), []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "keep"+c.want {
				t.Errorf("got %q, want %q", got, "keep"+c.want)
			}
		})
	}
}

// TestCanonicalErrors requires Decode's errors, and dst left as it was.
func TestCanonicalErrors(t *testing.T) {
	for i, in := range []string{``, `{"a":1,}`, `[1 2]`, "\ufeff{}", "[\"\xff\"", `{"a":"\x"}`, nest("[", "]", MaxDepth+1, "")} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			got, err := AppendCanonical([]byte("keep"), []byte(in))
			_, werr := refParse([]byte(in))
			if err == nil || werr == nil || err.Error() != werr.Error() {
				t.Fatalf("error %v, want %v", err, werr)
			}
			if string(got) != "keep" {
				t.Errorf("dst %q, want it unchanged", got)
			}
		})
	}
}

// refCanonical is a literal model of the canonical form on the reference
// parser's values, for the fuzz target: keys sorted through utf16.Encode,
// strings escaped code point by code point, numbers laid out from Go's
// shortest 'g' form.
func refCanonical(v *jsonref.Value) string {
	switch v.Kind {
	case jsonref.Null:
		return "null"
	case jsonref.Bool:
		return v.Str
	case jsonref.Int, jsonref.Float:
		switch v.Str {
		case "NaN", "Infinity", "-Infinity":
			return v.Str
		}
		f, _ := strconv.ParseFloat(v.Str, 64)
		return refNumber(f)
	case jsonref.String:
		return refString(v.Str)
	case jsonref.List:
		parts := make([]string, len(v.List))
		for i, e := range v.List {
			parts[i] = refCanonical(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	keys := slices.Clone(v.Keys)
	slices.SortFunc(keys, func(a, b string) int {
		return slices.Compare(utf16Of(a), utf16Of(b))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = refString(k) + ":" + refCanonical(v.Dict[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// utf16Of is s in UTF-16 code units, a lone surrogate as itself (which
// utf16.Encode would replace).
func utf16Of(s string) []uint16 {
	var us []uint16
	for _, r := range wtf8Runes(s) {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			us = append(us, uint16(r1), uint16(r2))
		} else {
			us = append(us, uint16(r))
		}
	}
	return us
}

func wtf8Runes(s string) []rune {
	var rs []rune
	for i := 0; i < len(s); {
		r, n := decodeWTF8([]byte(s[i:]))
		rs = append(rs, r)
		i += n
	}
	return rs
}

func refString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range wtf8Runes(s) {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r >= 0xd800 && r < 0xe000:
			b.WriteString(`\u` + strings.Repeat("0", 4-len(strconv.FormatInt(int64(r), 16))) + strconv.FormatInt(int64(r), 16))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// refNumber is Number::toString from Go's shortest 'g' digits.
func refNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 0):
		if f > 0 {
			return "Infinity"
		}
		return "-Infinity"
	case f == 0:
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	g := strconv.FormatFloat(f, 'g', -1, 64)
	mant, exp, _ := strings.Cut(g, "e")
	e := 0
	if exp != "" {
		e, _ = strconv.Atoi(exp)
	}
	ip, fp, _ := strings.Cut(mant, ".")
	digits := ip + fp
	n := len(ip) + e
	trimmed := strings.TrimLeft(digits, "0")
	n -= len(digits) - len(trimmed)
	digits = strings.TrimRight(trimmed, "0")
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	s := digits[:1]
	if k > 1 {
		s += "." + digits[1:]
	}
	x := n - 1
	if x >= 0 {
		return sign + s + "e+" + strconv.Itoa(x)
	}
	return sign + s + "e" + strconv.Itoa(x)
}

// FuzzCanonical holds AppendCanonical to the literal model on the
// reference parser's values: the same text, or the same error; and the
// canonical form is a fixed point.
func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalHostile() {
		if len(s) < 4096 {
			f.Add([]byte(s))
		}
	}
	for _, c := range trickyCases() {
		if len(c.line) < 4096 {
			f.Add([]byte(c.line))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := AppendCanonical(nil, in)
		v, werr := refParse(in)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("error %v, reference %v\ninput %q", err, werr, in)
		}
		if err != nil {
			return
		}
		if want := refCanonical(v); string(got) != want {
			t.Fatalf("got %q\nwant %q\ninput %q", got, want, in)
		}
		again, err := AppendCanonical(nil, got)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("not a fixed point: %q gives %q, %v", got, again, err)
		}
	})
}

// BenchmarkCanonical canonicalises every tool object of the real corpus,
// as a definition hash does; bytes are the tools' raw text.
func BenchmarkCanonical(b *testing.B) {
	raws, size := benchTools(b, bytes.Split(bytes.TrimSuffix(realcorpus.MustRead(b), []byte{'\n'}), []byte{'\n'}))
	b.SetBytes(size)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		for _, r := range raws {
			var err error
			if buf, err = AppendCanonical(buf[:0], r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestCanonicalConcurrent calls AppendCanonical from several goroutines at
// once, as decode workers do: its pooled scratch must not be shared (run
// with -race).
func TestCanonicalConcurrent(t *testing.T) {
	inputs := canonicalHostile()[:12]
	want := make([]string, len(inputs))
	for i, in := range inputs {
		out, err := AppendCanonical(nil, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = string(out)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for n := range 200 {
				i := (n + g) % len(inputs)
				buf, _ = AppendCanonical(buf[:0], []byte(inputs[i]))
				if string(buf) != want[i] {
					errs <- fmt.Sprintf("goroutine %d: %q gave %q, want %q", g, inputs[i], buf, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestAppendCanonicalTool requires AppendCanonicalTool to give
// AppendCanonical's bytes, and out[a:b] to be the canonical form of the
// schema the decoder's rule chooses: inputSchema, or input_schema when
// that is absent or null.
func TestAppendCanonicalTool(t *testing.T) {
	for _, tc := range []struct{ name, raw, schema string }{
		{"in order", `{"inputSchema": {"a": 1}, "name": "n"}`, `{"a":1}`},
		{"out of order", `{"name": "n", "inputSchema": {"z": [1.50, {"y": 1, "x": 2}], "a": "\u00e9"}}`, `{"a":"é","z":[1.5,{"x":2,"y":1}]}`},
		{"escaped key", `{"input\u0053chema": {"b": 1}, "description": "d"}`, `{"b":1}`},
		{"duplicate, last wins", `{"inputSchema": {"a": 1}, "zz": 0, "inputSchema": {"b": 2}}`, `{"b":2}`},
		{"null, alias", `{"inputSchema": null, "input_schema": {"k": "v"}}`, `{"k":"v"}`},
		{"absent, alias", `{"name": "n", "input_schema": {"k": []}}`, `{"k":[]}`},
		{"both, inputSchema wins", `{"input_schema": {"a": 1}, "inputSchema": {"b": 1}}`, `{"b":1}`},
		{"not an object", `{"inputSchema": "text"}`, `"text"`},
		{"key with a quote before it", `{"a\"b": {"inputSchema": 1}, "inputSchema": {"c": 3}}`, `{"c":3}`},
		{"neither", `{"name": "n", "x": {"inputSchema": {"a": 1}}}`, ``},
		{"no object", `[{"inputSchema": {"a": 1}}]`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := AppendCanonical([]byte("pre"), []byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			out, a, b, err := AppendCanonicalTool([]byte("pre"), []byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("canonical form %s, want %s", out, want)
			}
			if got := string(out[a:b]); got != tc.schema {
				t.Errorf("schema %q, want %q", got, tc.schema)
			}
		})
	}
	if _, _, _, err := AppendCanonicalTool(nil, []byte(`{"inputSchema": {`)); err == nil {
		t.Error("no error on a truncated tool")
	}
}
