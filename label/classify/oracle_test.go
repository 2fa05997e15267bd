package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atlas-reproduce/atlas-reproduce/internal/testenv"
)

// referencePy is the spec's Python reference, the oracle.
var referencePy = testenv.ReferencePy()

// pyString writes s as a JSON string that Python decodes to the str the Go
// matcher sees: every non-ASCII rune as \u escapes, and a lone surrogate held
// as WTF-8 as the \udXXX escape that yields that surrogate in Python.
func pyString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		if s[i] == 0xED && i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF {
			r := rune(s[i]&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
			fmt.Fprintf(b, `\u%04x`, r)
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			panic(fmt.Sprintf("pair generator made invalid UTF-8: %q", s))
		}
		i += n
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case r >= 0x20 && r < 0x7F:
			b.WriteByte(byte(r))
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
}

// pairGen produces (name, description) pairs aimed at the places where a
// lexical matcher can go wrong: boundaries, case, Unicode lowercasing, sre's
// case equivalences and the Unicode \b.
type pairGen struct {
	rng    *rand.Rand
	words  []string
	seps   []string
	uni    []string
	swap   map[byte][]string
	phrase []string
}

func newPairGen(seed uint64) *pairGen {
	g := &pairGen{rng: rand.New(rand.NewPCG(seed, 0x5eed))}
	for _, r := range Rules() {
		g.words = append(g.words, r.Forms...)
		g.phrase = append(g.phrase, r.Phrases...)
	}
	g.words = append(g.words,
		// the spec's ✗ examples and near misses
		"secretariat", "tokenizer", "authorization_flow_name", "clientSecret", "accessKeyId",
		"pathology", "directory_sync_toggle", "destinationPath", "commandment", "scripture",
		"total_results", "summed", "curriculum", "domainKnowledge", "baseUrl", "hostname_label_prefix",
		"in", "code", "monetary", "amounts", "sql2", "url1", "2fa", "id", "name", "query", "value",
		"a", "b", "x", "user", "api", "key", "file", "path_", "_url", "args_", "in_", "inx")
	g.seps = []string{"", "", " ", " ", "_", "-", ".", "/", ":", " : ", "  ", "\t", "\n", "0", "9", "(", ")", ",", "'", `"`, `\`, "\u00a0", "\u2028", "\u3000"}
	g.uni = []string{
		"ſ", "\u212A", "ı", "İ", "\u0307", "é", "É", "ß", "ẞ", "Σ", "σ", "ς", "µ", "Ω", "ǅ", "ﬀ", "ﬅ", "ﬆ",
		"日本", "д", "Д", "ي", "٣", "²", "Ⅻ", "ⅻ", "😀", "𝐀", "\U00010400", "\U0001E900", "\u0345", "ϐ",
		"\u200d", "\u00ad", "\ufeff", "\ufffd", "\xed\xa0\x80", "\xed\xbf\xbf", "ǰ", "ŉ", "\u1e9b", "K", "Å",
	}
	g.swap = map[byte][]string{
		's': {"ſ", "S"}, 'k': {"\u212A", "K"}, 'i': {"ı", "İ", "I"},
	}
	return g
}

func (g *pairGen) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }

// mutate changes the case of a word, or puts a Unicode look-alike that sre
// (or str.lower) treats as the letter into it.
func (g *pairGen) mutate(w string) string {
	switch g.rng.IntN(6) {
	case 0:
		return strings.ToUpper(w)
	case 1:
		if w != "" {
			return strings.ToUpper(w[:1]) + w[1:]
		}
	case 2:
		var b strings.Builder
		for i := 0; i < len(w); i++ {
			if alts, ok := g.swap[w[i]]; ok && g.rng.IntN(2) == 0 {
				b.WriteString(g.pick(alts))
			} else {
				b.WriteByte(w[i])
			}
		}
		return b.String()
	case 3:
		if len(w) > 1 {
			i := g.rng.IntN(len(w) - 1)
			return w[:i+1] + g.pick(g.uni) + w[i+1:]
		}
	}
	return w
}

func (g *pairGen) text(maxParts int) string {
	var b strings.Builder
	n := g.rng.IntN(maxParts + 1)
	for i := 0; i < n; i++ {
		switch g.rng.IntN(10) {
		case 0:
			b.WriteString(g.pick(g.uni))
		case 1:
			p := g.pick(g.phrase)
			if g.rng.IntN(2) == 0 {
				p = g.mutate(p)
			}
			b.WriteString(p)
		default:
			b.WriteString(g.mutate(g.pick(g.words)))
		}
		if g.rng.IntN(4) == 0 {
			b.WriteString(g.pick(g.uni))
		}
		b.WriteString(g.pick(g.seps))
	}
	return b.String()
}

func (g *pairGen) pair() [2]string { return [2]string{g.text(3), g.text(6)} }

// runOracle sends pairs to the Python reference and returns its label lists.
func runOracle(t testing.TB, pairs [][2]string) [][]string {
	t.Helper()
	py := testenv.Python3(t)
	var in bytes.Buffer
	for _, p := range pairs {
		in.WriteByte('[')
		pyString(&in, p[0])
		in.WriteByte(',')
		pyString(&in, p[1])
		in.WriteString("]\n")
	}
	dir := t.TempDir()
	inPath := filepath.Join(dir, "pairs.jsonl")
	if err := os.WriteFile(inPath, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(inPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(py, referencePy, "pairs")
	cmd.Stdin = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 %s pairs: %v\n%s", referencePy, err, stderr.Bytes())
	}
	var got [][]string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var l []string
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("oracle output line %d: %v", len(got)+1, err)
		}
		got = append(got, l)
	}
	if len(got) != len(pairs) {
		t.Fatalf("oracle answered %d lines for %d pairs", len(got), len(pairs))
	}
	return got
}

// TestDifferentialCPython requires the Go labels to equal CPython's on
// 120,000 generated pairs.
func TestDifferentialCPython(t *testing.T) {
	g := newPairGen(1)
	pairs := make([][2]string, 0, 120_000)
	for _, p := range cornerPairs() {
		if utf8.ValidString(strings.ReplaceAll(strings.ReplaceAll(p[0]+p[1], "\xed\xa0\x80", ""), "\xed\xbf\xbf", "")) {
			pairs = append(pairs, p)
		}
	}
	for len(pairs) < cap(pairs) {
		pairs = append(pairs, g.pair())
	}
	want := runOracle(t, pairs)
	seen := map[string]int{}
	bad := 0
	for i, p := range pairs {
		got := labels(Property(p[0], p[1]))
		if !slices.Equal(got, want[i]) && (len(got) != 0 || len(want[i]) != 0) {
			if bad++; bad <= 20 {
				t.Errorf("pair %d Property(%q, %q) = %v, CPython %v", i, p[0], p[1], got, want[i])
			}
		}
		for _, l := range want[i] {
			seen[l]++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d pairs differ from CPython", bad, len(pairs))
	}
	// The generator must exercise every label both ways, or agreement
	// proves little.
	for _, r := range Rules() {
		if n := seen[r.ID]; n < 1000 || n > len(pairs)-1000 {
			t.Errorf("label %s fired on %d of %d pairs: the generator does not exercise it both ways", r.ID, n, len(pairs))
		}
	}
	t.Logf("%d pairs agree with CPython; label counts %v", len(pairs), seen)
}
