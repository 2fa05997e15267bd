package census

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// lineGen generates random lines that stay close to the record shapes: the
// keys the decoder looks for (also spelled with escapes), duplicated at
// random, holding values of the expected type most of the time and of any
// other type otherwise; and now and then one corrupted byte.
type lineGen struct {
	r *rand.Rand
}

func (g *lineGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *lineGen) ws() string {
	if g.r.IntN(4) == 0 {
		return g.pick(" ", "  ", "\t", "\r", " \t")
	}
	return ""
}

var genNames = []string{
	`"path"`, `"a"`, `"b"`, `"\u0061"`, `"é"`, `"\u00e9"`, `"\ud800"`, `"\ud83d\ude00"`, `"😀"`, `""`,
	`"file_path"`, `"x\ny"`, `"x\u000ay"`, `"\u0000"`, `"token"`, `"p\/q"`,
}

func (g *lineGen) str() string {
	if g.r.IntN(3) == 0 {
		return g.pick(genNames...)
	}
	return g.pick(`"file path"`, `"API token \"quoted\""`, `"caf\u00e9"`, `"tab\there"`, `"lone \udc00 low"`,
		`"naïve ß"`, `"url: https:\/\/x"`, `"\ud800\udc00\ud800"`, `"line\u2028sep"`, `"s"`)
}

func (g *lineGen) scalar() string {
	return g.pick(`1`, `-0`, `0`, `42`, `-17`, `1.5`, `-0.0`, `1e3`, `2E-2`, `NaN`, `Infinity`, `-Infinity`,
		`true`, `false`, `null`, `123456789012345678901234567890`, g.str(), g.str())
}

// obj builds an object of n members with keys from keys and values from val.
func (g *lineGen) obj(n int, keys []string, val func(key string) string) string {
	var b strings.Builder
	b.WriteString("{" + g.ws())
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(g.ws() + "," + g.ws())
		}
		k := keys[g.r.IntN(len(keys))]
		b.WriteString(k + g.ws() + ":" + g.ws() + val(k))
	}
	b.WriteString(g.ws() + "}")
	return b.String()
}

func (g *lineGen) list(n int, val func() string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = val()
	}
	return "[" + g.ws() + strings.Join(parts, g.ws()+","+g.ws()) + g.ws() + "]"
}

func (g *lineGen) any(depth int) string {
	if depth <= 0 || g.r.IntN(3) > 0 {
		return g.scalar()
	}
	if g.r.IntN(2) == 0 {
		return g.list(g.r.IntN(4), func() string { return g.any(depth - 1) })
	}
	return g.obj(g.r.IntN(4), append([]string{`"properties"`, `"description"`, `"x"`}, genNames[:4]...),
		func(string) string { return g.any(depth - 1) })
}

// typed returns want() most of the time and any other value otherwise.
func (g *lineGen) typed(want func() string) string {
	if g.r.IntN(6) == 0 {
		return g.any(2)
	}
	return want()
}

func (g *lineGen) propValue() string {
	return g.typed(func() string {
		return g.obj(g.r.IntN(4), []string{`"description"`, `"descr\u0069ption"`, `"type"`, `"properties"`, `"items"`},
			func(k string) string {
				if strings.HasPrefix(k, `"descr`) {
					return g.typed(g.str)
				}
				return g.any(2)
			})
	})
}

func (g *lineGen) required() string {
	return g.typed(func() string {
		return g.list(g.r.IntN(5), func() string {
			if g.r.IntN(5) == 0 {
				return g.scalar()
			}
			return g.pick(genNames...)
		})
	})
}

func (g *lineGen) props() string {
	return g.typed(func() string { return g.obj(g.r.IntN(6), genNames, func(string) string { return g.propValue() }) })
}

func (g *lineGen) defs() string {
	return g.typed(func() string {
		return g.obj(g.r.IntN(4), []string{`"A"`, `"B"`, `"\u0041"`, `""`}, func(string) string {
			return g.typed(func() string {
				return g.obj(g.r.IntN(4), []string{`"properties"`, `"required"`, `"type"`, `"\u0070roperties"`}, func(k string) string {
					switch k {
					case `"required"`:
						return g.required()
					case `"type"`:
						return g.any(1)
					}
					return g.props()
				})
			})
		})
	})
}

func (g *lineGen) schema() string {
	if g.r.IntN(8) == 0 {
		return "null"
	}
	return g.typed(func() string {
		return g.obj(g.r.IntN(6), []string{`"properties"`, `"required"`, `"definitions"`, `"$defs"`, `"\u0024defs"`, `"type"`, `"requir\u0065d"`},
			func(k string) string {
				switch k {
				case `"properties"`:
					return g.props()
				case `"required"`, `"requir\u0065d"`:
					return g.required()
				case `"type"`:
					return `"object"`
				}
				return g.defs()
			})
	})
}

var genToolKeys = []string{`"name"`, `"description"`, `"inputSchema"`, `"input_schema"`, `"inputSchema"`, `"na\u006de"`, `"other"`}

func (g *lineGen) toolMember(k string) string {
	switch k {
	case `"name"`, `"na\u006de"`, `"description"`:
		return g.typed(g.str)
	case `"inputSchema"`, `"input_schema"`:
		return g.schema()
	}
	return g.any(2)
}

func (g *lineGen) tool() string {
	return g.typed(func() string { return g.obj(g.r.IntN(5), genToolKeys, g.toolMember) })
}

func (g *lineGen) record() string {
	keys := append([]string{`"tools"`, `"tool"`, `"server_id"`, `"server"`, `"server_url"`, `"url"`, `"tool\u0073"`}, genToolKeys...)
	line := g.ws() + g.obj(1+g.r.IntN(6), keys, func(k string) string {
		switch k {
		case `"tools"`, `"tool\u0073"`:
			return g.typed(func() string { return g.list(g.r.IntN(4), g.tool) })
		case `"tool"`:
			return g.tool()
		case `"server_id"`, `"server"`, `"server_url"`, `"url"`:
			return g.scalar()
		}
		return g.toolMember(k)
	}) + g.ws()
	if g.r.IntN(10) == 0 {
		// One corrupted byte: most such lines are errors, a few are not.
		b := []byte(line)
		i := g.r.IntN(len(b))
		b[i] = g.pick(`"`, `\`, `{`, `}`, `[`, `]`, `,`, `:`, "\x01", "\xff", " ", "x", "0", "-")[0]
		line = string(b)
	}
	return line
}

// TestPythonGenerated holds both decoders to CPython on generated lines.
func TestPythonGenerated(t *testing.T) {
	t.Parallel()
	g := &lineGen{r: rand.New(rand.NewPCG(5, 6))}
	var names []string
	var lines [][]byte
	for i := 0; i < 4000; i++ {
		names = append(names, "generated line "+strconv.Itoa(i))
		lines = append(lines, []byte(g.record()))
	}
	compareWithPython(t, names, lines)
}

// TestGeneratedAgainstReference runs many more generated lines through the
// two Go decoders alone.
func TestGeneratedAgainstReference(t *testing.T) {
	g := &lineGen{r: rand.New(rand.NewPCG(7, 8))}
	d := NewDecoder()
	for i := 0; i < 30000; i++ {
		line := []byte(g.record())
		got, err := d.Decode(line)
		want, werr := ReferenceDecode(line)
		if diff := diffRecords(got, err, want, werr); diff != "" {
			t.Fatalf("%s\nline %q", diff, line)
		}
	}
}
