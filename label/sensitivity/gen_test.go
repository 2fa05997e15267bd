package sensitivity_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The synthetic schemas of the differential tests: JSON text written by
// hand, so that duplicate keys, escaped keywords, non-object values where
// schemas belong and any nesting can be produced.

// names mixes camelCase, snake_case, dotted, hyphenated and opaque names,
// each hiding or showing a class form, with non-ASCII and escapes.
var names = []string{
	"privateKey", "webhookURL", "HTTPServer", "accessKeyId", "clientSecret", "outputPath", "destPath",
	"filePath", "baseUrl", "callbackURL", "shellCmd", "sqlQuery", "totalAmount", "unitPrice", "currencyCode",
	"access_token", "total_results", "file_name", "api.key", "user-password", "dir.name", "target_url",
	"query", "limit", "name", "id", "tokEn", "URLPath", "myAPIKey", "XMLHttpRequest", "a1B", "ABc", "AB",
	"path", "token", "url", "PROMPT", "İd", "naïvePath", "ſecret", "jsonSchema", "x", "", "dataSet",
	"the.amount", "refund-amount", "sum_total", "Sum", "hostName", "domainName", "linkHREF", "codeBlock",
	`\u0070athName`, `quote\"Path`, `lone\ud800Token`, `pair\ud83d\ude00Dir`,
}

var descs = []string{
	"", "the value", "the file path to read", "an API token", "amount in USD", "currency code", "page size",
	"shell command", "callback endpoint", "a URL", "Total results", `line\nbreak token`, "monetary value",
	"the hostName to use", "ſecret thing", "İstanbul", `\u0041mount in cents`,
}

type schemaGen struct {
	rng *rand.Rand
	b   *bytes.Buffer
}

func newSchemaGen(seed uint64) *schemaGen {
	return &schemaGen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), b: new(bytes.Buffer)}
}

func (g *schemaGen) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }

// scalar writes a value that is not an object.
func (g *schemaGen) scalar() {
	g.b.WriteString(g.pick([]string{`"str"`, `1`, `-0.5e3`, `true`, `null`, `[]`, `[1,"a"]`, `NaN`, `"properties"`}))
}

// keyword returns a keyword, now and then escaped or misspelt.
func (g *schemaGen) keyword(k string) string {
	switch g.rng.IntN(20) {
	case 0:
		return `\u00` + fmt.Sprintf("%02x", k[0]) + k[1:]
	case 1:
		return strings.ToUpper(k[:1]) + k[1:]
	}
	return k
}

// schema writes a schema node; depth is its schema depth, budget bounds the
// size.
func (g *schemaGen) schema(depth int, budget *int) {
	if *budget <= 0 || g.rng.IntN(8) == 0 {
		if g.rng.IntN(3) == 0 {
			g.scalar()
			return
		}
		fmt.Fprintf(g.b, `{"type": "string", "description": %q}`, g.pick(descs))
		return
	}
	*budget--
	g.b.WriteByte('{')
	n := 1 + g.rng.IntN(4)
	for i := range n {
		if i > 0 {
			g.b.WriteString(", ")
		}
		g.member(depth, budget)
	}
	g.b.WriteByte('}')
}

func (g *schemaGen) member(depth int, budget *int) {
	kws := []string{"properties", "properties", "properties", "patternProperties", "$defs", "definitions",
		"additionalProperties", "items", "items", "not", "if", "then", "else", "prefixItems", "anyOf", "oneOf",
		"allOf", "description", "required", "$ref", "type", "unknown"}
	k := g.pick(kws)
	fmt.Fprintf(g.b, `"%s": `, g.keyword(k))
	switch k {
	case "properties", "patternProperties", "$defs", "definitions":
		if g.rng.IntN(10) == 0 {
			g.scalar()
			return
		}
		g.b.WriteByte('{')
		m := g.rng.IntN(4)
		for i := range m {
			if i > 0 {
				g.b.WriteString(", ")
			}
			fmt.Fprintf(g.b, `"%s": `, g.pick(names))
			if g.rng.IntN(3) == 0 {
				fmt.Fprintf(g.b, `{"description": "%s"}`, g.pick(descs))
			} else {
				g.schema(depth+1, budget)
			}
		}
		g.b.WriteByte('}')
	case "additionalProperties", "not", "if", "then", "else":
		g.schema(depth+1, budget)
	case "items", "prefixItems", "anyOf", "oneOf", "allOf":
		if k == "items" && g.rng.IntN(2) == 0 {
			g.schema(depth+1, budget)
			return
		}
		if g.rng.IntN(10) == 0 {
			g.schema(depth+1, budget)
			return
		}
		g.b.WriteByte('[')
		m := g.rng.IntN(3)
		for i := range m {
			if i > 0 {
				g.b.WriteString(", ")
			}
			g.schema(depth+1, budget)
		}
		g.b.WriteByte(']')
	case "description":
		if g.rng.IntN(4) == 0 {
			g.scalar()
		} else {
			fmt.Fprintf(g.b, `"%s"`, g.pick(descs))
		}
	case "required":
		g.b.WriteByte('[')
		m := g.rng.IntN(4)
		for i := range m {
			if i > 0 {
				g.b.WriteString(", ")
			}
			fmt.Fprintf(g.b, `"%s"`, g.pick(names))
		}
		g.b.WriteByte(']')
	case "$ref":
		g.b.WriteString(g.pick([]string{`"#"`, `"#/$defs/a"`, `"#/definitions/x"`}))
	default:
		g.scalar()
	}
}

// line returns one record line holding a few tools.
func (g *schemaGen) line(i int) []byte {
	g.b.Reset()
	fmt.Fprintf(g.b, `{"server_id": "s%d", "tools": [`, i)
	n := 1 + g.rng.IntN(3)
	for t := range n {
		if t > 0 {
			g.b.WriteString(", ")
		}
		fmt.Fprintf(g.b, `{"name": "t%d", "inputSchema": `, t)
		budget := 4 + g.rng.IntN(30)
		g.schema(0, &budget)
		g.b.WriteByte('}')
	}
	g.b.WriteString("]}")
	return bytes.Clone(g.b.Bytes())
}

// chain writes a schema whose only hidden property sits at the given depth,
// reached through keyword kw at every level (wrapped as the keyword wants).
func chain(kw string, depth int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"name": "chain", "inputSchema": `)
	var open func(d int)
	open = func(d int) {
		if d == depth {
			b.WriteString(`{"properties": {"hiddenToken": {"description": "a secret"}, "apiKey": {"type": "string"}}}`)
			return
		}
		switch kw {
		case "properties", "patternProperties", "$defs", "definitions":
			fmt.Fprintf(&b, `{"%s": {"n%d": `, kw, d)
			open(d + 1)
			b.WriteString(`}}`)
		case "items", "prefixItems", "anyOf", "oneOf", "allOf":
			fmt.Fprintf(&b, `{"%s": [1, `, kw)
			open(d + 1)
			b.WriteString(`]}`)
		default:
			fmt.Fprintf(&b, `{"%s": `, kw)
			open(d + 1)
			b.WriteString(`}`)
		}
	}
	open(0)
	b.WriteString(`}`)
	return b.Bytes()
}

// fixedLines are the hand-written cases: each keyword at depths 63 to 66,
// $ref cycles, duplicate keys whose first value hides a class, and values
// that are not objects where schemas belong.
func fixedLines() [][]byte {
	var out [][]byte
	for _, kw := range []string{"properties", "patternProperties", "$defs", "definitions", "additionalProperties",
		"items", "not", "if", "then", "else", "prefixItems", "anyOf", "oneOf", "allOf"} {
		for d := 62; d <= 67; d++ {
			out = append(out, chain(kw, d))
		}
		out = append(out, chain(kw, 1), chain(kw, 2))
	}
	out = append(out, [][]byte{
		[]byte(`{"name": "ref-cycle", "inputSchema": {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b", "properties": {"next": {"$ref": "#/$defs/a"}}}, "b": {"$ref": "#/$defs/a", "items": {"properties": {"callback_url": {}}}}}}}`),
		[]byte(`{"name": "ref-root", "inputSchema": {"properties": {"self": {"$ref": "#"}, "child": {"properties": {"outPath": {}}}}}}`),
		[]byte(`{"name": "dup", "inputSchema": {"properties": {"a": {"properties": {"hiddenToken": {}}}}, "properties": {"a": {}}}}`),
		[]byte(`{"name": "dup-entry", "inputSchema": {"properties": {"a": {"properties": {"hiddenToken": {}}}, "a": {"type": "string"}}}}`),
		[]byte(`{"name": "dup-defs", "inputSchema": {"$defs": {"x": {"items": {"properties": {"sqlCode": {}}}}, "x": 1}}}`),
		[]byte(`{"name": "dup-desc", "inputSchema": {"items": {"properties": {"q": {"description": "the file path", "description": 3}}}}}`),
		[]byte(`{"name": "dup-desc2", "inputSchema": {"items": {"properties": {"q": {"description": 3, "description": "the file path"}}}}}`),
		[]byte(`{"name": "dup-kw", "inputSchema": {"anyOf": [{"properties": {"baseUrl": {}}}], "anyOf": []}}`),
		[]byte(`{"name": "non-objects", "inputSchema": {"items": [1, "x", null, {"properties": {"tok": {"description": "bearer"}}}], "not": [], "anyOf": {"properties": {"apiKey": {}}}, "additionalProperties": true, "properties": 3}}`),
		[]byte(`{"name": "escaped-keyword", "inputSchema": {"items": {"\u0070roperties": {"webhook\u0055RL": {"d\u0065scription": "hook"}}}}}`),
		[]byte(`{"name": "input_schema-fallback", "inputSchema": null, "input_schema": {"items": {"properties": {"priceList": {}}}}}`),
		[]byte(`{"name": "schema-not-object", "inputSchema": [{"properties": {"token": {}}}]}`),
		[]byte(`{"name": "many", "inputSchema": {"items": {"properties": {` + manyProps(40) + `}}}}`),
		[]byte(`{"name": "many-defs", "inputSchema": {"$defs": {` + manyDefs(40) + `}}}`),
		[]byte(`{"name": "camel-req", "inputSchema": {"properties": {"privateKey": {}, "outputPath": {"description": "x"}, "total_results": {}}, "required": ["privateKey", "total_results"]}}`),
		[]byte(`{"name": "lost", "inputSchema": {"properties": {"tokEn": {}}}}`),
	}...)
	return out
}

// manyProps writes n entries with duplicates, beyond the walker's linear
// duplicate check.
func manyProps(n int) string {
	var parts []string
	for i := range n {
		if i%7 == 3 {
			parts = append(parts, `"p1": {"description": "plain"}`)
			continue
		}
		parts = append(parts, fmt.Sprintf(`"p%d": {"description": "%s"}`, i, []string{"x", "the secret", "y", "file dir"}[i%4]))
	}
	parts = append(parts, `"p1": {"description": "plain again"}`, `"p2": {"description": "none"}`)
	return strings.Join(parts, ", ")
}

func manyDefs(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprintf(`"d%d": {"items": {"properties": {"v%dUrl": {}}}}`, i%30, i))
	}
	return strings.Join(parts, ", ")
}
