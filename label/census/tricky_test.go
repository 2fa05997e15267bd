package census

import (
	"strings"
)

// trickyCase is a line and what the reference makes of it: "ok", "blank",
// "syntax" or "record". The expectation is ours; the differential test also
// holds every line against CPython itself.
type trickyCase struct {
	name string
	line string
	want string
}

func nest(open, close string, n int, inner string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

func trickyCases() []trickyCase {
	big := "1" + strings.Repeat("0", MaxIntDigits-1)
	many := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	return []trickyCase{
		// Shapes.
		{"server", `{"server_id":"s1","tools":[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"file path"},"n":{"type":"integer"}},"required":["path"]}}]}`, "ok"},
		{"server two tools", `{"server_id": "s", "tools": [{"name": "a"}, {"name": "b", "inputSchema": {"properties": {"x": {}}}}]}`, "ok"},
		{"tool", `{"server":"x","source":"y","tool":{"name":"t","inputSchema":{"properties":{"a":{}}}}}`, "ok"},
		{"flat", `{"url":"http://h","name":"t","inputSchema":{"properties":{"a":{"description":"x"}}}}`, "ok"},
		{"flat empty", `{}`, "ok"},
		{"tools empty", `{"tools":[]}`, "ok"},
		{"tools before tool", `{"tool":{"name":"x"},"tools":[]}`, "ok"},
		{"tools wins over bad tool", `{"tools":[{"name":"x"}],"tool":5}`, "ok"},
		{"whitespace everywhere", " \t{ \"tools\" : [ { \"name\" : \"a\" , \"inputSchema\" : { \"properties\" : { \"p\" : { \"description\" : \"d\" } } , \"required\" : [ \"p\" ] } } ] } \r\t ", "ok"},
		{"trailing CR", "{\"name\":\"a\"}\r", "ok"},

		// Duplicate keys: last value, first position.
		{"dup properties", `{"inputSchema":{"properties":{"a":{}},"properties":{"b":{},"c":{}}}}`, "ok"},
		{"dup properties last not object", `{"inputSchema":{"properties":{"a":{}},"properties":5}}`, "ok"},
		{"dup properties first not object", `{"inputSchema":{"properties":[],"properties":{"a":{}}}}`, "ok"},
		{"dup property names", `{"inputSchema":{"properties":{"a":{"description":"1"},"b":{},"a":{"description":"2"}}}}`, "ok"},
		{"dup property name last not object", `{"inputSchema":{"properties":{"a":{"description":"1"},"a":true}}}`, "ok"},
		{"dup property name via escape", `{"inputSchema":{"properties":{"a":{},"b":{},"\u0061":{"description":"2"}}}}`, "ok"},
		{"dup description", `{"inputSchema":{"properties":{"a":{"description":"x","description":5},"b":{"description":5,"description":"y"}}}}`, "ok"},
		{"dup name", `{"tools":[{"name":"a","name":"b"},{"name":"a","name":1},{"name":1,"name":"c"}]}`, "ok"},
		{"dup tools first bad", `{"tools":[1],"tools":[{"name":"x"}]}`, "ok"},
		{"dup tools last bad", `{"tools":[{"name":"x"}],"tools":5}`, "record"},
		{"dup tool", `{"tool":{"name":"a"},"tool":{"name":"b"}}`, "ok"},
		{"dup tool last bad", `{"tool":{"name":"a"},"tool":null}`, "record"},
		{"dup required", `{"inputSchema":{"properties":{"a":{},"b":{}},"required":["a"],"required":["b"]}}`, "ok"},
		{"required before properties", `{"inputSchema":{"required":["b","a"],"properties":{"a":{},"b":{},"c":{}}}}`, "ok"},
		{"dup required last not list", `{"inputSchema":{"properties":{"a":{}},"required":["a"],"required":"a"}}`, "ok"},
		{"dup inputSchema null", `{"inputSchema":{"properties":{"a":{}}},"inputSchema":null,"input_schema":{"properties":{"b":{}}}}`, "ok"},
		{"dup inputSchema", `{"inputSchema":{"properties":{"a":{}}},"input_schema":{"properties":{"c":{}}},"inputSchema":{"properties":{"b":{}}}}`, "ok"},
		{"dup definitions", `{"inputSchema":{"definitions":{"A":{"properties":{"a":{}}}},"definitions":{"B":{"properties":{"b":{}}}}}}`, "ok"},
		{"dup def key", `{"inputSchema":{"$defs":{"A":{"properties":{"a":{}}},"B":{"properties":{"b":{}}},"A":{"properties":{"c":{}},"required":["c"]}}}}`, "ok"},
		{"dup def key last not object", `{"inputSchema":{"$defs":{"A":{"properties":{"a":{}}},"B":{"properties":{"b":{}}},"A":7}}}`, "ok"},
		{"dup def properties", `{"inputSchema":{"$defs":{"A":{"properties":{"a":{}},"required":["b"],"properties":{"b":{}}}}}}`, "ok"},
		{"dup server_id", `{"server_id":"a","server_id":1.5,"server":"b"}`, "ok"},
		{"escaped interesting keys", `{"na\u006de":"x","input\u0053chema":{"\u0070roperties":{"p\u0061th":{"descr\u0069ption":"d\u00e9"}},"requir\u0065d":["path"],"\u0024defs":{"D":{"properties":{"q":{}}}}}}`, "ok"},
		{"escaped tools key", `{"tool\u0073":[{"name":"x"}],"\u0074ool":3}`, "ok"},

		// Tool schema and enumeration.
		{"inputSchema null", `{"inputSchema":null,"input_schema":{"properties":{"a":{}}}}`, "ok"},
		{"inputSchema absent", `{"input_schema":{"properties":{"a":{}}}}`, "ok"},
		{"inputSchema false", `{"inputSchema":false,"input_schema":{"properties":{"a":{}}}}`, "ok"},
		{"inputSchema list", `{"inputSchema":[],"input_schema":{"properties":{"a":{}}}}`, "ok"},
		{"inputSchema string", `{"inputSchema":"{}","input_schema":{"properties":{"a":{}}}}`, "ok"},
		{"input_schema after null", `{"input_schema":{"properties":{"b":{}}},"inputSchema":null}`, "ok"},
		{"both null", `{"inputSchema":null,"input_schema":null}`, "ok"},
		{"order defs before properties", `{"inputSchema":{"$defs":{"D":{"properties":{"x":{}}}},"properties":{"y":{}},"definitions":{"E":{"properties":{"z":{}},"required":["z"]}},"required":["y","z","x"]}}`, "ok"},
		{"required is per schema", `{"inputSchema":{"properties":{"a":{}},"required":["a","b"],"definitions":{"D":{"properties":{"a":{},"b":{}}}}}}`, "ok"},
		{"required non-strings", `{"inputSchema":{"properties":{"a":{},"b":{},"c":{},"1":{},"null":{}},"required":["a",1,null,["b"],{"c":1},"c",true]}}`, "ok"},
		{"required string", `{"inputSchema":{"properties":{"a":{}},"required":"a"}}`, "ok"},
		{"required object", `{"inputSchema":{"properties":{"a":{}},"required":{"a":true}}}`, "ok"},
		{"required escaped", `{"inputSchema":{"properties":{"a":{},"é":{}},"required":["\u0061","\u00e9"]}}`, "ok"},
		{"properties list", `{"inputSchema":{"properties":["a"],"required":["a"]}}`, "ok"},
		{"properties null", `{"inputSchema":{"properties":null}}`, "ok"},
		{"property values not objects", `{"inputSchema":{"properties":{"a":1,"b":"desc","c":null,"d":[],"e":true,"f":NaN}}}`, "ok"},
		{"description not string", `{"inputSchema":{"properties":{"a":{"description":1},"b":{"description":null},"c":{"description":{"x":"y"}},"d":{"description":["d"]},"e":{"description":true}}}}`, "ok"},
		{"empty names", `{"inputSchema":{"properties":{"":{"description":""}},"$defs":{"":{"properties":{"":{}}}}}}`, "ok"},
		{"definitions not object", `{"inputSchema":{"definitions":[{"properties":{"a":{}}}],"$defs":"x"}}`, "ok"},
		{"def entry variants", `{"inputSchema":{"definitions":{"A":1,"B":{},"C":{"properties":[]},"D":{"required":["x"]},"E":{"properties":{}},"F":{"properties":{"f":{"description":"ff"}},"required":["f"]}}}}`, "ok"},
		{"nested not enumerated", `{"inputSchema":{"properties":{"a":{"type":"object","properties":{"inner":{}},"$defs":{"X":{"properties":{"y":{}}}}},"b":{"anyOf":[{"properties":{"c":{}}}],"items":{"properties":{"d":{}}}}},"allOf":[{"properties":{"e":{}}}],"$defs":{"D":{"properties":{"p":{}},"definitions":{"Q":{"properties":{"q":{}}}}}}}}`, "ok"},
		{"definitions and $defs", `{"inputSchema":{"$defs":{"B":{"properties":{"b":{}}}},"definitions":{"A":{"properties":{"a":{}}}}}}`, "ok"},
		{"schema in tool of record", `{"server_id":1,"tool":{"inputSchema":{"properties":{"x":{"description":"y"}}}},"inputSchema":{"properties":{"ignored":{}}}}`, "ok"},
		{"tool name and description kinds", `{"tools":[{"name":null,"description":1},{"name":["a"],"description":{}},{"name":"","description":""}]}`, "ok"},
		{"many properties with duplicates", `{"inputSchema":{"properties":{` + many(40, func(i int) string {
			return `"p` + string(rune('a'+i%23)) + `":{"description":"d` + strings.Repeat("x", i) + `"}`
		}) + `},"required":[` + many(30, func(i int) string { return `"p` + string(rune('a'+(i*7)%26)) + `"` }) + `]}}`, "ok"},
		{"many defs with duplicates", `{"inputSchema":{"$defs":{` + many(40, func(i int) string {
			return `"D` + string(rune('a'+i%21)) + `":{"properties":{"x` + string(rune('a'+i%5)) + `":{}},"required":["xa","xb"]}`
		}) + `}}}`, "ok"},

		// Server id aliases.
		{"sid int", `{"server_id":42}`, "ok"},
		{"sid negative zero", `{"server_id":-0}`, "ok"},
		{"sid negative", `{"server_id":-17}`, "ok"},
		{"sid big int", `{"server_id":123456789012345678901234567890}`, "ok"},
		{"sid 4300 digits", `{"server_id":` + big + `}`, "ok"},
		{"sid 4301 digits", `{"server_id":` + big + `0}`, "syntax"},
		{"sid -4300 digits", `{"server_id":-` + big + `}`, "ok"},
		{"sid float falls through", `{"server_id":1.0,"server":"b"}`, "ok"},
		{"sid exp falls through", `{"server_id":1e3,"url":"u"}`, "ok"},
		{"sid negative zero float", `{"server_id":-0.0,"server_url":"su"}`, "ok"},
		{"sid bool falls through", `{"server_id":true,"server":false,"server_url":7}`, "ok"},
		{"sid null falls through", `{"server_id":null,"url":"last"}`, "ok"},
		{"sid nan", `{"server_id":NaN,"server":Infinity,"server_url":-Infinity}`, "ok"},
		{"sid object", `{"server_id":{"id":1},"server":["x"]}`, "ok"},
		{"sid escaped", `{"server":"sm\u00efthery:\ud83d\ude00\n"}`, "ok"},
		{"sid alias order", `{"url":"u","server_url":"su","server":"s","server_id":"id"}`, "ok"},
		{"sid none usable", `{"url":1.5}`, "ok"},

		// Numbers and constants.
		{"nan and infinities", `{"a":NaN,"b":Infinity,"c":-Infinity,"d":[NaN,-Infinity],"inputSchema":{"properties":{"x":{"description":NaN,"min":-Infinity}}}}`, "ok"},
		{"number forms", `{"a":[0,-0,1,-1,0.5,-0.5,1e5,1E+5,1e-5,-1.5e10,0e0,123456789.123456789e-123,1E400]}`, "ok"},
		{"int 4301 digits deep", `{"tools":[{"name":"a","x":[` + big + `0]}]}`, "syntax"},
		{"float 5000 digits", `{"a":` + big + `.5}`, "ok"},
		{"float long exponent", `{"a":1` + strings.Repeat("0", 5000) + `e1}`, "ok"},
		{"leading zero", `{"a":01}`, "syntax"},
		{"trailing dot", `{"a":1.}`, "syntax"},
		{"leading dot", `{"a":.5}`, "syntax"},
		{"bare exponent", `{"a":1e}`, "syntax"},
		{"exponent sign only", `{"a":1e+}`, "syntax"},
		{"minus only", `{"a":-}`, "syntax"},
		{"plus", `{"a":+1}`, "syntax"},
		{"hex", `{"a":0x10}`, "syntax"},
		{"nan lowercase", `{"a":nan}`, "syntax"},
		{"infinity lowercase", `{"a":infinity}`, "syntax"},
		{"minus inf short", `{"a":-Inf}`, "syntax"},
		{"truncated true", `{"a":tru}`, "syntax"},
		{"truncated null at end", `{"a":nul`, "syntax"},
		{"NaN at end", `NaN`, "record"},

		// Strings and escapes.
		{"simple escapes", `{"name":"q\"b\\s\/b\bf\fn\nr\rt\t","inputSchema":{"properties":{"k\n":{"description":"\"quoted\" \\ \/"}}}}`, "ok"},
		{"nul escape", `{"name":"a\u0000b","inputSchema":{"properties":{"\u0000":{"description":"\u0000"}}}}`, "ok"},
		{"surrogate pair", `{"name":"\ud83d\ude00","inputSchema":{"properties":{"\uD83D\uDE00":{}}}}`, "ok"},
		{"lone high", `{"name":"a\ud800b","inputSchema":{"properties":{"\ud800":{"description":"\udbff"}}}}`, "ok"},
		{"lone low", `{"name":"\udc00","inputSchema":{"properties":{"x\udfff":{}}},"server_id":"\udc00"}`, "ok"},
		{"high high low", `{"name":"\ud800\ud800\udc00"}`, "ok"},
		{"low high", `{"name":"\udc00\ud800"}`, "ok"},
		{"high then escape", `{"name":"\ud800\n\udc00"}`, "ok"},
		{"high then text u", `{"name":"\ud800u\udc00"}`, "ok"},
		{"high then bmp", `{"name":"\ud800\u0041"}`, "ok"},
		{"high at end", `{"name":"\ud800"}`, "ok"},
		{"low low", `{"name":"\udc00\udc01","inputSchema":{"properties":{"\udc00\udfff":{}}}}`, "ok"},
		{"pair bounds", `{"name":"\udbff\udfff\ud800\udc00\ud7ff\udc00\ue000"}`, "ok"},
		{"lone surrogates are distinct names", `{"inputSchema":{"properties":{"\ud800":{},"\ud801":{},"\ud800":{"description":"again"}},"required":["\ud801"]}}`, "ok"},
		{"surrogate required match", `{"inputSchema":{"properties":{"\ud83d\ude00":{}},"required":["😀"]}}`, "ok"},
		{"non-ascii raw", `{"name":"café 中文 😀","inputSchema":{"properties":{"é":{"description":"naïve ß İ"}}}}`, "ok"},
		{"line separator raw", "{\"name\":\"a\u2028b\u2029c\u0085\"}", "ok"},
		{"DEL raw", "{\"name\":\"a\x7fb\"}", "ok"},
		{"BOM inside string", "{\"name\":\"\ufeffx\"}", "ok"},
		{"escape hex case", `{"name":"\u00E9\u00e9\uABCD\uabcd"}`, "ok"},
		{"bad escape", `{"name":"\x"}`, "syntax"},
		{"bad escape in skipped", `{"other":{"a":"\a"}}`, "syntax"},
		{"short u escape", `{"name":"\u12"}`, "syntax"},
		{"bad hex", `{"name":"\u12G4"}`, "syntax"},
		{"bad hex in pair", `{"name":"\ud800\uZZZZ"}`, "syntax"},
		{"short u at end", `{"name":"\u0041`, "syntax"},
		{"short pair at end", `{"name":"\ud800\udc0`, "syntax"},
		{"backslash at end", `{"name":"\`, "syntax"},
		{"unterminated", `{"name":"abc`, "syntax"},
		{"unterminated key", `{"name`, "syntax"},
		{"raw tab in string", "{\"name\":\"a\tb\"}", "syntax"},
		{"raw NUL in string", "{\"name\":\"a\x00b\"}", "syntax"},
		{"raw 0x1f in skipped string", "{\"x\":[\"a\x1fb\"]}", "syntax"},
		{"raw control in key", "{\"a\x01\":1}", "syntax"},
		{"single quotes", `{'a':1}`, "syntax"},

		// UTF-8 and whitespace.
		{"invalid utf8 continuation", "{\"name\":\"\x80\"}", "syntax"},
		{"invalid utf8 overlong", "{\"name\":\"\xc0\x80\"}", "syntax"},
		{"invalid utf8 surrogate", "{\"name\":\"\xed\xa0\x80\"}", "syntax"},
		{"invalid utf8 too big", "{\"name\":\"\xf4\x90\x80\x80\"}", "syntax"},
		{"invalid utf8 truncated", "{\"name\":\"\xe2\x82\"}", "syntax"},
		{"invalid utf8 in skipped", "{\"x\":\"ok\",\"y\":\"\xff\"}", "syntax"},
		{"invalid utf8 after value", "{}\xff", "syntax"},
		{"invalid utf8 blank", " \xa0 ", "syntax"},
		{"BOM", "\ufeff{}", "syntax"},
		{"BOM after space", " \ufeff{}", "syntax"},
		{"vertical tab", "{\x0b}", "syntax"},
		{"form feed", "\x0c{}", "syntax"},
		{"nbsp between tokens", "{\"a\":\u00a01}", "syntax"},
		{"zero width space", "\u200b", "syntax"},
		{"lone BOM", "\ufeff", "syntax"},

		// Blank lines, as line.strip() sees them.
		{"empty", "", "blank"},
		{"spaces", "   ", "blank"},
		{"tabs CR", "\t\r\t", "blank"},
		{"vt ff", "\x0b\x0c", "blank"},
		{"separators", "\x1c\x1d\x1e\x1f", "blank"},
		{"unicode spaces", "\u0085\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000", "blank"},

		// Structure errors.
		{"extra object", `{} {}`, "syntax"},
		{"extra char", `{}x`, "syntax"},
		{"extra bracket", `{"a":1}}`, "syntax"},
		{"two numbers", `1 2`, "syntax"},
		{"open object", `{`, "syntax"},
		{"key only", `{"a"}`, "syntax"},
		{"missing value", `{"a":}`, "syntax"},
		{"trailing comma object", `{"a":1,}`, "syntax"},
		{"trailing comma array", `{"tools":[{},]}`, "syntax"},
		{"missing comma", `{"a":[1 2]}`, "syntax"},
		{"missing colon", `{"a" 1}`, "syntax"},
		{"number key", `{1:2}`, "syntax"},
		{"comment", `{"a":1 // c}`, "syntax"},
		{"mismatched close", `{"a":[1}`, "syntax"},
		{"mismatched close object", `{"a":{"b":1]}`, "syntax"},
		{"leading comma", `{,"a":1}`, "syntax"},
		{"empty key list", `{:1}`, "syntax"},
		{"syntax error after bad tools", `{"tools":5,"x":}`, "syntax"},
		{"syntax error in ignored schema part", `{"inputSchema":{"properties":{"a":{}},"examples":[{"x":tru}]}}`, "syntax"},
		{"syntax error in property value", `{"inputSchema":{"properties":{"a":{"type":"string","enum":["x",]}}}}`, "syntax"},

		// Record errors.
		{"top list", `[]`, "record"},
		{"top number", `1`, "record"},
		{"top string", `"s"`, "record"},
		{"top null", `null`, "record"},
		{"tools object", `{"tools":{}}`, "record"},
		{"tools null", `{"tools":null}`, "record"},
		{"tools string", `{"tools":"x"}`, "record"},
		{"tools element number", `{"tools":[{},1]}`, "record"},
		{"tools element null first", `{"tools":[null,5]}`, "record"},
		{"tools element list", `{"tools":[{},{},[]]}`, "record"},
		{"tool list", `{"tool":[]}`, "record"},
		{"tool null", `{"tool":null}`, "record"},
		{"tool string", `{"server_id":"x","tool":"t"}`, "record"},

		// Nesting.
		{"deep list 900 top", nest("[", "]", 900, ""), "record"},
		{"deep object 900", nest(`{"a":`, "}", 900, "1"), "ok"},
		{"deep in description", `{"inputSchema":{"properties":{"a":{"description":` + nest("[", "]", 895, "") + `}}}}`, "ok"},
		{"deep list 990 top", nest("[", "]", MaxDepth, ""), "record"},
		{"deep object 990", nest(`{"a":`, "}", MaxDepth, "null"), "ok"},
		{"deep list 1000", nest("[", "]", 1000, ""), "syntax"},
		{"deep in schema 1000", `{"inputSchema":{"properties":{"a":{"items":` + nest(`{"items":`, "}", 1000, "{}") + `}}}}`, "syntax"},
		{"deep in tools 1000", `{"tools":[{"name":"a","x":` + nest("[", "]", 1000, "1") + `}]}`, "syntax"},
	}
}
