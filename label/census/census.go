// Package census turns one line of a census JSON Lines file into the record,
// tools and parameter properties the classifier needs, exactly as the spec's
// Python reference (bench/reference.py: json.loads, then tools_of, server_id,
// tool_schema and iter_properties) sees them.
//
// Decoder is the hot path: it validates every byte of the line as CPython's
// json module would, but materialises only the strings the classifier
// reads, aliasing them into the line when they carry no escape, and reuses
// its memory from line to line. Decoder.Stream with Decoder.Next gives the
// same record with its tools one at a time, the whole line validated first,
// so that a server of tens of thousands of tools is never materialised at
// once. Lexer is the one reader of JSON tokens beneath them, beneath
// AppendCanonical (RFC 8785 canonical JSON, for hashing a tool) and beneath
// the sensitivity package's deep walk. The tests and fuzz targets hold all
// of them to a slow, literal transcription of CPython's scanner
// (internal/jsonref) and to CPython itself.
// Inspector summarises the shapes and key paths of a file's first lines, for
// users checking that their archive fits the expected record shapes.
//
// # Python semantics reproduced
//
//   - The line must be strict UTF-8 (Python decodes the file before parsing);
//     a leading U+FEFF is rejected as json.loads rejects it.
//   - Duplicate object keys: the last value wins, but the key keeps the
//     position of its first occurrence (dict semantics). This decides the
//     order of properties and which "properties", "required", "tools",
//     "inputSchema" and server id value counts.
//   - NaN, Infinity and -Infinity are accepted values; raw control
//     characters in strings are not (strict mode); only space, tab, CR and LF
//     are whitespace between tokens.
//   - An integer literal of more than MaxIntDigits digits is an error, as
//     CPython's int conversion limit makes json.loads raise ValueError.
//   - Nesting deeper than MaxDepth is an error, where CPython raises
//     RecursionError.
//   - \uXXXX escapes of a surrogate pair combine; a lone surrogate is kept
//     as Python keeps it in a str. Decoded strings are therefore WTF-8: a lone
//     surrogate appears as its 3-byte generalized UTF-8 form (ED A0 80 to
//     ED BF BF), which Go treats as invalid UTF-8 (utf8.DecodeRune yields
//     RuneError for it). Comparing such byte strings is the same as comparing
//     the Python strs, because the encoding is one-to-one.
package census

import (
	"strconv"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects a line may have.
// CPython's json raises RecursionError a little below 1000 levels, the exact
// point depending on the caller's stack; 990 sits just under it, so every
// line Python accepts at census depth is accepted here too.
const MaxDepth = 990

// MaxIntDigits is the most digits an integer literal may have: CPython 3.11
// refuses to convert longer decimal strings to int (sys.int_max_str_digits),
// so json.loads fails on them. Numbers with a fraction or exponent are floats
// and have no limit.
const MaxIntDigits = 4300

// Shape says how a line carries its tools.
type Shape uint8

// The three record shapes of tools_of in the reference.
const (
	// ShapeServer is one server per line: {"tools": [tool, ...]}.
	ShapeServer Shape = iota
	// ShapeTool is one tool per line wrapped in a record: {"tool": {...}}.
	ShapeTool
	// ShapeFlat is a line that is itself the tool.
	ShapeFlat
)

// String returns the shape's name as the reference reports it.
func (s Shape) String() string {
	switch s {
	case ShapeServer:
		return "server"
	case ShapeTool:
		return "tool"
	case ShapeFlat:
		return "flat"
	}
	return "Shape(" + strconv.Itoa(int(s)) + ")"
}

// WhereKind says which part of a tool's input schema a property came from.
type WhereKind uint8

// The three places the spec enumerates properties from.
const (
	// WhereProperties is the schema's top-level "properties" object.
	WhereProperties WhereKind = iota
	// WhereDefinitions is the "properties" of an object under "definitions".
	WhereDefinitions
	// WhereDefs is the "properties" of an object under "$defs".
	WhereDefs
)

// Property is one enumerated parameter property.
type Property struct {
	// Name is the property's key, unescaped (WTF-8, see the package doc).
	Name []byte
	// Description is the property's "description" when that is a string;
	// empty when it is absent, not a string, or the property is not an object.
	Description []byte
	// Required is true when Name is a string element of the required list of
	// the same schema object that holds this property.
	Required bool
	// Where is the part of the schema the property came from.
	Where WhereKind
	// DefKey is the key under definitions or $defs; empty for WhereProperties.
	DefKey []byte
}

// WhereString returns the reference's "where" value: "properties",
// "definitions/<key>" or "$defs/<key>". It allocates; the hot path should
// use Where and DefKey.
func (p *Property) WhereString() string {
	switch p.Where {
	case WhereDefinitions:
		return "definitions/" + string(p.DefKey)
	case WhereDefs:
		return "$defs/" + string(p.DefKey)
	}
	return "properties"
}

// Tool is one MCP tool of a record with its enumerated properties.
type Tool struct {
	// Name is the tool's "name"; HasName is false when it is absent or not a
	// JSON string (the reference's None).
	Name    []byte
	HasName bool
	// Description is the tool-level "description", by the same rule.
	Description    []byte
	HasDescription bool
	// Properties are the properties of the tool's input schema in the
	// reference's enumeration order.
	Properties []Property
	// Schema is the raw JSON text of the input schema tool_schema chose,
	// from its '{' to its '}', when that is an object; nil otherwise. It
	// aliases the line (valid as long as the Record), and the decoder has
	// validated it, so readers of the whole schema need not parse it again
	// for errors.
	Schema []byte
	// Raw is the raw JSON text of the tool object, from its '{' to its
	// '}', as it stands in the line: an element of "tools", the value of
	// "tool", or, for a flat record (ShapeFlat), the whole record object,
	// server id fields and all, since that object is the tool the
	// reference reads. It aliases the line like Schema, and it has been
	// validated: AppendCanonical gives its canonical form.
	Raw []byte
	// Offset is the byte offset of Raw in the line (the document decoded),
	// so that a reader of a multi-line document can say on which line the
	// tool stands.
	Offset int
	// Text names Raw among the tool texts a remembering decoder holds
	// (Decoder.RememberTools), for TextResults; zero when it holds none.
	Text TextID

	// tape is where the decoder's tape of Raw lies, for
	// AppendCanonicalDecoded; zero when it has none.
	tape toolTape
}

// Record is one decoded line.
type Record struct {
	// Shape is how the line carried its tools.
	Shape Shape
	// ServerID is the value of the first of server_id, server, server_url and
	// url that is present with a string or integer value (an integer in
	// canonical decimal, so -0 gives "0"); HasServerID is false when none is.
	ServerID    []byte
	HasServerID bool
	// Tools are the record's tools in order.
	Tools []Tool
}

// SyntaxError reports a line that CPython's json.loads (after strict UTF-8
// decoding) would reject.
type SyntaxError struct {
	// Offset is the byte offset in the line where the problem was found.
	Offset int
	// Msg says what was wrong, in the words of CPython's json where it has some.
	Msg string
}

// Error returns the message and the byte offset.
func (e *SyntaxError) Error() string {
	return e.Msg + " at byte " + strconv.Itoa(e.Offset)
}

// RecordError reports valid JSON that is not one of the record shapes, where
// the reference raises BadRecord.
type RecordError struct {
	// Msg is the reference's BadRecord text.
	Msg string
}

// Error returns the message.
func (e *RecordError) Error() string { return e.Msg }

// The messages both decoders give, so that the fuzz targets can require the
// same error from each.
const (
	msgBOM          = "Unexpected UTF-8 BOM (decode using utf-8-sig)"
	msgUTF8         = "invalid UTF-8"
	msgValue        = "Expecting value"
	msgExtra        = "Extra data"
	msgKey          = "Expecting property name enclosed in double quotes"
	msgColon        = "Expecting ':' delimiter"
	msgComma        = "Expecting ',' delimiter"
	msgUnterminated = "Unterminated string starting" // Error adds " at byte N"
	msgControl      = "Invalid control character"
	msgEscape       = "Invalid \\escape"
	msgUEscape      = "Invalid \\uXXXX escape"
	msgDepth        = "maximum nesting depth exceeded"
	msgIntDigits    = "integer literal exceeds the 4300-digit limit"

	msgNotObject  = "record is not a JSON object"
	msgToolsList  = `"tools" is not a list`
	msgToolObject = `"tool" is not a JSON object`
)

// toolsElemMsg is the reference's message for a tools element that is not an
// object; it runs only on the error path.
func toolsElemMsg(i int) string {
	return `"tools"[` + strconv.Itoa(i) + `] is not a JSON object`
}

// IsBlank reports whether the reference skips the line: Python's
// line.strip() removes every character of it. The characters are those
// str.isspace() accepts, which is wider than JSON's whitespace: a line of
// U+3000 is skipped, a line "\v{}" is not blank and fails to parse. A line
// that is not valid UTF-8 is not blank, so that Decode reports it.
func IsBlank(line []byte) bool {
	for i := 0; i < len(line); {
		c := line[i]
		if c < utf8.RuneSelf {
			if !asciiSpace[c] {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(line[i:])
		if !isPySpace(r) {
			return false
		}
		i += n
	}
	return true
}

// asciiSpace marks the ASCII characters Python's str.isspace accepts,
// including the information separators U+001C to U+001F.
var asciiSpace = [utf8.RuneSelf]bool{
	'\t': true, '\n': true, '\v': true, '\f': true, '\r': true,
	0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true, ' ': true,
}

// isPySpace reports whether Python's str.isspace accepts a non-ASCII rune
// (RuneError, from invalid UTF-8, is not space).
func isPySpace(r rune) bool {
	switch {
	case r == 0x85, r == 0xa0, r == 0x1680:
		return true
	case r >= 0x2000 && r <= 0x200a:
		return true
	case r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}
