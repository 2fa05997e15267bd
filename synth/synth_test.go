package synth

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/atlas-reproduce/atlas-reproduce/internal/progress"
	"github.com/atlas-reproduce/atlas-reproduce/internal/release"
	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// The oracle-sized censuses are generated once per shape and shared by the
// tests that read them.
const (
	oracleTools   = 20000
	oracleServers = 1200
)

var (
	testRoot   string
	censusOnce sync.Map // shape -> *censusResult
)

type censusResult struct {
	once  sync.Once
	dir   string
	truth *Truth
	err   error
}

func TestMain(m *testing.M) {
	var err error
	testRoot, err = os.MkdirTemp("", "synth-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(testRoot)
	os.Exit(code)
}

func oracleCensus(t *testing.T, shape string) (string, *Truth) {
	t.Helper()
	v, _ := censusOnce.LoadOrStore(shape, &censusResult{})
	r := v.(*censusResult)
	r.once.Do(func() {
		r.dir = filepath.Join(testRoot, "oracle-"+shape)
		opt := Options{Tools: oracleTools, Servers: oracleServers, Seed: 7, Shape: shape}
		r.truth, r.err = Write(context.Background(), r.dir, opt)
	})
	if r.err != nil {
		t.Fatalf("Write(%s): %v", shape, r.err)
	}
	return r.dir, r.truth
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readGzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The standard library's reader, not the writer's own package, checks
	// that the stream is plain gzip.
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}

var outputFiles = []string{release.ToolsFile, release.ServersFile, release.CandidatesFile, release.SumsFile, TruthFile}

func writeTo(t *testing.T, o Options) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "census")
	if _, err := Write(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSameSeedSameBytes(t *testing.T) {
	for _, shape := range []string{ShapeServers, ShapeTools} {
		base := Options{Tools: 3000, Servers: 300, Seed: 42, Shape: shape}
		o1 := base
		o1.Workers = 1
		ref := writeTo(t, o1)
		for _, w := range []int{3, 8} {
			o := base
			o.Workers = w
			dir := writeTo(t, o)
			for _, name := range outputFiles {
				if !bytes.Equal(readAll(t, filepath.Join(ref, name)), readAll(t, filepath.Join(dir, name))) {
					t.Errorf("shape %s: %s differs between 1 and %d workers", shape, name, w)
				}
			}
		}
		o := base
		o.Seed = 43
		dir := writeTo(t, o)
		for _, name := range []string{release.ToolsFile, release.ServersFile, release.CandidatesFile, release.SumsFile} {
			if bytes.Equal(readAll(t, filepath.Join(ref, name)), readAll(t, filepath.Join(dir, name))) {
				t.Errorf("shape %s: %s is the same for seeds 42 and 43", shape, name)
			}
		}
	}
}

func TestSHA256SUMS(t *testing.T) {
	dir, _ := oracleCensus(t, ShapeServers)
	lines := strings.Split(strings.TrimSuffix(string(readAll(t, filepath.Join(dir, release.SumsFile))), "\n"), "\n")
	var names []string
	for _, line := range lines {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("not a sha256sum line: %q", line)
		}
		h := sha256.Sum256(readAll(t, filepath.Join(dir, name)))
		if got := hex.EncodeToString(h[:]); got != sum {
			t.Errorf("%s: manifest says %s, file hashes to %s", name, sum, got)
		}
		names = append(names, name)
	}
	want := []string{release.CandidatesFile, release.ToolsFile, release.ServersFile}
	if !slicesEqual(names, want) {
		t.Errorf("manifest lists %v, want %v", names, want)
	}
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// TestTruthMatchesPython runs the reference implementation over the
// generated file: the counts the generator derived from its model must be
// the ones CPython's json and re derive from the bytes.
func TestTruthMatchesPython(t *testing.T) {
	py := testenv.Python3(t)
	for _, shape := range []string{ShapeServers, ShapeTools} {
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
			dir, truth := oracleCensus(t, shape)
			cmd := exec.Command(py, testenv.ReferencePy(), "census", filepath.Join(dir, release.ToolsFile))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("reference.py census: %v\n%s", err, stderr.Bytes())
			}
			file := readAll(t, filepath.Join(dir, TruthFile))
			if !bytes.Equal(out, file) {
				t.Errorf("truth.json differs from reference.py census:\n got %s\nwant %s", file, out)
			}
			if !bytes.Equal(truth.MarshalPython(), file) {
				t.Errorf("Write's return value differs from truth.json")
			}
			back, err := ReadTruth(filepath.Join(dir, TruthFile))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.MarshalPython(), file) {
				t.Errorf("ReadTruth does not round-trip:\n got %s\nwant %s", back.MarshalPython(), file)
			}
		})
	}
}

func TestCounts(t *testing.T) {
	for _, shape := range []string{ShapeServers, ShapeTools} {
		dir, truth := oracleCensus(t, shape)
		if truth.Tools != oracleTools || truth.Servers != oracleServers {
			t.Errorf("%s: truth has %d tools on %d servers, want %d on %d", shape, truth.Tools, truth.Servers, oracleTools, oracleServers)
		}
		lines := 0
		for _, line := range splitLines(t, readGzip(t, filepath.Join(dir, release.ToolsFile)), release.ToolsFile) {
			lines++
			if !utf8.Valid(line) {
				t.Fatalf("%s: line %d is not UTF-8", release.ToolsFile, lines)
			}
		}
		want := map[string]int{ShapeServers: oracleServers, ShapeTools: oracleTools}[shape]
		if lines != want {
			t.Errorf("%s: %s has %d lines, want %d", shape, release.ToolsFile, lines, want)
		}
		if shape == ShapeTools && (truth.Shapes["flat"] == 0 || truth.Shapes["tool"] == 0) {
			t.Errorf("tools shape lacks flat or tool records: %v", truth.Shapes)
		}
		if shape == ShapeServers && truth.Shapes["server"] != oracleServers {
			t.Errorf("servers shape: %v", truth.Shapes)
		}

		// The two side files hold plain JSON (no NaN), so encoding/json reads them.
		ids := map[string]bool{}
		for i, line := range splitLines(t, readGzip(t, filepath.Join(dir, release.ServersFile)), release.ServersFile) {
			var rec struct {
				ServerID  json.RawMessage `json:"server_id"`
				URL       string          `json:"url"`
				ToolCount int             `json:"tool_count"`
			}
			if err := json.Unmarshal(line, &rec); err != nil || rec.URL == "" || rec.ToolCount < 1 {
				t.Fatalf("%s line %d: %v: %s", release.ServersFile, i+1, err, line)
			}
			ids[strings.Trim(string(rec.ServerID), `"`)] = true
		}
		if len(ids) != oracleServers {
			t.Errorf("%s: %d distinct server ids, want %d", release.ServersFile, len(ids), oracleServers)
		}
		cands := 0
		for i, line := range splitLines(t, readAll(t, filepath.Join(dir, release.CandidatesFile)), release.CandidatesFile) {
			var rec map[string]any
			if err := json.Unmarshal(line, &rec); err != nil || rec["url"] == nil {
				t.Fatalf("%s line %d: %v: %s", release.CandidatesFile, i+1, err, line)
			}
			cands++
		}
		if cands < oracleServers {
			t.Errorf("%s: %d candidates for %d servers", release.CandidatesFile, cands, oracleServers)
		}
	}
}

func splitLines(t *testing.T, data []byte, name string) [][]byte {
	t.Helper()
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("%s does not end with a newline", name)
	}
	return bytes.Split(data[:len(data)-1], []byte("\n"))
}

// TestCorners checks that the files hold every malformed corner the
// generator promises, by markers in the bytes that only that corner writes.
func TestCorners(t *testing.T) {
	servers, _ := oracleCensus(t, ShapeServers)
	tools, _ := oracleCensus(t, ShapeTools)
	data := append(readGzip(t, filepath.Join(servers, release.ToolsFile)), readGzip(t, filepath.Join(tools, release.ToolsFile))...)
	str := `"(?:[^"\\]|\\.)*"`
	forms := strings.Join(vocab().forms, "|")
	markers := []struct{ name, re string }{
		{"properties is an array", `"properties": \[`},
		{"properties is null", `"properties": null`},
		{"properties is a string", `"properties": "`},
		{"required is a string", `"required": "`},
		{"required is an object", `"required": \{`},
		{"required holds a non-string", `"required": \[(?:` + str + `, )*(?:-?\d|null|true|false|\{|\[)`},
		{"property value not an object", `"properties": \{` + str + `: (?:"[a-z]+"|true|null|-?\d|\[)`},
		{"description null", `"description": null`},
		{"description a number", `"description": \d`},
		{"description a list or object", `"description": [\[{]`},
		{"description key twice", `"description": (?:` + str + `|null), "description": `},
		{"properties key twice", `\}, "properties": \{`},
		{"properties key twice, last null", `\}, "properties": null`},
		{"NaN", `: NaN[,}]`},
		{"Infinity", `: Infinity[,}]`},
		{"-Infinity", `: -Infinity[,}]`},
		{"escaped ASCII letter in a key", `"[^"]*\\u00(?:4[1-9a-f]|5[0-9a]|6[1-9a-f]|7[0-9a])[^"]*": `},
		{"escaped solidus", `\\/`},
		{"escaped non-ASCII", `\\u(?:00[89a-f][0-9a-f]|0[1-9a-f][0-9a-f]{2}|[1-9a-c][0-9a-f]{3}|[ef][0-9a-f]{3})`},
		{"U+0130", "\u0130"},
		{"U+0131", "\u0131"},
		{"U+017F", "\u017F"},
		{"U+212A", "\u212A"},
		{"ſ inside a word", `\pLſ|ſ\pL`},
		{"İ inside a word", `\pLİ|İ\pL`},
		{"ı inside a word", `\pLı|ı\pL`},
		{"Kelvin sign inside a word", "\\pL\u212A|\u212A\\pL"},
		{"İ before a form", `İ(?:` + forms + `)`},
		{"non-Latin letter before a form", `[\p{Han}\p{Cyrillic}\p{Greek}\p{Arabic}\p{Hangul}\p{Katakana}](?:` + forms + `)`},
		{"non-Latin letter after a form", `(?:` + forms + `)[\p{Han}\p{Cyrillic}\p{Greek}\p{Arabic}\p{Hangul}\p{Katakana}]`},
		{"amount in", `(?i)amount in`},
		{"currency code", `(?i)currency code`},
		{"monetary", `(?i)monetary`},
		{"anyOf with properties", `"anyOf": \[\{"type": "object", "properties": \{`},
		{"items with properties", `"items": \{"type": "object", "properties": \{`},
		{"properties inside a property", `"properties": \{(?:` + str + `: \{[^{}]*\}, )*` + str + `: \{"type": "object", "properties": \{`},
		{"allOf with properties", `"allOf": \[\{"properties": \{`},
		{"$defs with properties", `"\$defs": \{"\w+": \{"type": "object", "properties": \{`},
		{"definitions with properties", `"definitions": \{"\w+": \{"type": "object", "properties": \{`},
		{"definitions not an object", `"(?:\$defs|definitions)": \[`},
		{"definition not an object", `"Any": true`},
		{"$ref", `\{"\$ref": "#/`},
		{"camelCase name", `"[a-z]+[A-Z][A-Za-z]*": \{"type"`},
		{"kebab-case name", `"[a-z]+-[a-z-]+": \{"type"`},
		{"draft-3 required", `"required": true\}`},
		{"input_schema", `"input_schema": \{`},
		{"inputSchema null then input_schema", `"inputSchema": null, "input_schema": \{`},
		{"inputSchema and a decoy input_schema", `\}, "input_schema": \{`},
		{"inputSchema a string", `"inputSchema": "\{`},
		{"inputSchema null alone", `"inputSchema": null[,}]`},
		{"tool without a name", `"tools?": [\[{]?\{"description"`},
		{"tool name a number", `"name": \d`},
		{"server alias", `(?m)^\{(?:"server_id": [^,]+, )?"server": `},
		{"server_url alias", `"server_url": `},
		{"url alias", `(?m)^\{(?:"server_id": [^,]+, )?"url": `},
		{"integer server id", `"server_id": \d+[,}]`},
		{"server id beyond uint64", `"server_id": 9\d{20}[,}]`},
		{"skipped server_id value", `"server_id": (?:null|true|false|7\.0|1e3), `},
		{"server id after the tools", `(?m)\], "server_id": [^\n]*\}$`},
		{"server id after the tool", `(?m)\}, "(?:server_id|server|server_url|url)": [^\n{]*\}$`},
	}
	for _, m := range markers {
		if !regexp.MustCompile(m.re).Match(data) {
			t.Errorf("no %s (marker %s)", m.name, m.re)
		}
	}

	// Surrogates: lone ones, high and low, and no high escape directly
	// followed by a low one except where a real pair was meant.
	lone := regexp.MustCompile(`\\u[dD][89abAB][0-9a-fA-F]{2}(\\u[dD][c-fC-F][0-9a-fA-F]{2})?|\\u[dD][c-fC-F][0-9a-fA-F]{2}`)
	var high, low int
	for _, m := range lone.FindAllSubmatch(data, -1) {
		switch {
		case len(m[1]) > 0: // a pair: an escaped astral character
		case bytes.HasPrefix(bytes.ToLower(m[0]), []byte(`\ud8`)), bytes.HasPrefix(bytes.ToLower(m[0]), []byte(`\ud9`)),
			bytes.HasPrefix(bytes.ToLower(m[0]), []byte(`\uda`)), bytes.HasPrefix(bytes.ToLower(m[0]), []byte(`\udb`)):
			high++
		default:
			low++
		}
	}
	if high == 0 || low == 0 {
		t.Errorf("lone surrogates: %d high, %d low; want both", high, low)
	}

	// A property name given twice in a row, the second time with another
	// value (the last wins, at the first's position).
	adj := regexp.MustCompile(`(` + str + `): \{[^{}]*\}, (` + str + `): \{`)
	dups, escDups := 0, 0
	for _, m := range adj.FindAllSubmatch(data, -1) {
		a, b := decodeKey(t, m[1]), decodeKey(t, m[2])
		if a == b {
			dups++
			if !bytes.Equal(m[1], m[2]) {
				escDups++
			}
		}
	}
	if dups == 0 {
		t.Error("no duplicate property name")
	}
	if escDups == 0 {
		t.Log("no adjacent duplicate spelled differently (escaped) in this sample")
	}
}

func decodeKey(t *testing.T, quoted []byte) string {
	t.Helper()
	s, err := strconv.Unquote(string(quoted))
	if err != nil {
		// JSON escapes Go's Unquote does not know (\/ and surrogates);
		// compare those raw.
		return string(quoted)
	}
	return s
}

func TestToolCounts(t *testing.T) {
	c := toolCounts(DefaultTools, DefaultServers, DefaultSeed)
	sum, heavy := 0, 0
	var sorted []int
	for _, n := range c {
		if n < 1 {
			t.Fatalf("a server with %d tools", n)
		}
		sum += int(n)
		sorted = append(sorted, int(n))
		if n >= 100 {
			heavy++
		}
	}
	sort.Ints(sorted)
	if sum != DefaultTools {
		t.Errorf("counts sum to %d, want %d", sum, DefaultTools)
	}
	if median := sorted[len(sorted)/2]; heavy < 10 || median > 20 || sorted[len(sorted)-1] < 200 {
		t.Errorf("not heavy-tailed: median %d, max %d, %d servers with >= 100 tools", median, sorted[len(sorted)-1], heavy)
	}
	if d := toolCounts(DefaultTools, DefaultServers, DefaultSeed); !int32sEqual(c, d) {
		t.Error("toolCounts is not deterministic")
	}
	for _, tc := range [][2]int{{1, 1}, {5, 5}, {6, 5}, {1000, 3}} {
		s := 0
		for _, n := range toolCounts(tc[0], tc[1], 1) {
			s += int(n)
		}
		if s != tc[0] {
			t.Errorf("toolCounts(%d, %d) sums to %d", tc[0], tc[1], s)
		}
	}
}

func int32sEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestOptionErrors(t *testing.T) {
	for _, o := range []Options{
		{Tools: 10, Servers: 0, Shape: ShapeServers},
		{Tools: 5, Servers: 10, Shape: ShapeServers},
		{Tools: 10, Servers: 1, Shape: "lines"},
	} {
		dir := t.TempDir()
		if _, err := Write(context.Background(), dir, o); err == nil {
			t.Errorf("Write(%+v) succeeded", o)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("Write(%+v) left %d files", o, len(ents))
		}
	}
}

// TestCancel cancels a run part-way: Write must fail with the cause and
// leave no file, final or temporary, behind.
func TestCancel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("stop here")
	o := Options{Tools: 100000, Servers: 6000, Seed: 1, Shape: ShapeServers, Workers: 2,
		Progress: func(r progress.Report) {
			if r.Done > 10000 {
				cancel(stop)
			}
		}}
	_, err := Write(ctx, dir, o)
	if !errors.Is(err, stop) {
		t.Fatalf("Write after cancel: %v, want %v", err, stop)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("cancelled Write left %v", names)
	}
}

// TestEffective checks the model's reading of duplicate keys and wrong types
// on a hand-built tool, property by property (the census counts alone do not
// show order).
func TestEffective(t *testing.T) {
	tl := tool{place: placeInput}
	tl.top.reset()
	tl.top.props = []member{
		{name: "a", kind: kObject, desc: "first", descKind: kString},
		{name: "b", kind: kString},
		{name: "a", kind: kObject, desc: "second", descKind: kString},
		{name: "c", kind: kObject, desc: "x", descKind: kNull, desc0Kind: kString, desc0: "decoy"},
		{name: "d", kind: kObject, desc: "kept", descKind: kString, desc0Kind: kNull},
	}
	tl.top.reqKind = kArray
	tl.top.req = []reqItem{{name: "b", kind: kString}, {name: "c", kind: kNumber}, {name: "d", kind: kArray}}
	tl.defs = []defsBlock{
		{key: "$defs", kind: kObject, entries: []defEntry{{name: "E", kind: kObject, s: schema{propsKind: kObject, props: []member{{name: "e", kind: kObject, desc: "in defs", descKind: kString}}}}}},
		{key: "definitions", kind: kArray, entries: []defEntry{{name: "F", kind: kObject, s: schema{propsKind: kObject, props: []member{{name: "f", kind: kObject}}}}}},
	}
	var got []string
	tl.effective(func(name, desc string, req bool) { got = append(got, fmt.Sprintf("%s|%s|%v", name, desc, req)) })
	want := []string{"a|second|false", "b||true", "c||false", "d|kept|false", "e|in defs|false"}
	if !slicesEqual(got, want) {
		t.Errorf("effective:\n got %v\nwant %v", got, want)
	}
	tl.top.reqKind = kString
	got = got[:0]
	tl.effective(func(name, desc string, req bool) {
		if req {
			got = append(got, name)
		}
	})
	if len(got) != 0 {
		t.Errorf("required from a non-list: %v", got)
	}
	for _, p := range []uint8{placeNone, placeString, placeNullOnly} {
		tl.place = p
		n := 0
		tl.effective(func(string, string, bool) { n++ })
		if n != 0 {
			t.Errorf("placement %d enumerated %d properties", p, n)
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, tc := range []struct {
		in    string
		style uint8
		want  string
	}{
		{"token", escLetter, `"\u0074oken"`},
		{"a/b", escSlash, `"a\/b"`},
		{"é😀", escUnicode, `"\u00e9\ud83d\ude00"`},
		{"x" + wtf8Surrogate(0xD800) + "y", escPlain, `"x\ud800y"`},
		{"q\"\\\n\x01", escPlain, `"q\"\\\n\u0001"`},
		{"İ", escPlain, `"İ"`},
	} {
		if got := string(appendString(nil, tc.in, tc.style)); got != tc.want {
			t.Errorf("appendString(%q, %d) = %s, want %s", tc.in, tc.style, got, tc.want)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	o := Options{Tools: 50000, Servers: 3000, Seed: 1, Shape: ShapeServers}
	for b.Loop() {
		if _, err := Write(context.Background(), dir, o); err != nil {
			b.Fatal(err)
		}
	}
	st, _ := os.Stat(filepath.Join(dir, release.ToolsFile))
	b.ReportMetric(float64(st.Size()), "gz-bytes")
}

// TestServerTag checks that server tags never repeat: two servers with the
// same vocabulary slug would otherwise share an id, and the census would
// count one server fewer than the truth says.
func TestServerTag(t *testing.T) {
	const r4 = 36 * 36 * 36 * 36
	seen := map[string]int{}
	check := func(i int) {
		tag := serverTag(i)
		if j, dup := seen[tag]; dup {
			t.Fatalf("servers %d and %d share the tag %q", j, i, tag)
		}
		seen[tag] = i
	}
	for i := range 100000 {
		check(i)
	}
	for i := r4 - 1000; i < r4+100000; i++ {
		check(i)
	}
}
