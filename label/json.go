package label

import "github.com/atlas-reproduce/atlas-reproduce/label/census"

// ToolLabels is the classification of one tool: one line of the classify
// command's output (keys exactly as documented) and one SARIF source.
type ToolLabels struct {
	// ServerID is null when the record carries no usable server id.
	ServerID *string `json:"server_id"`
	// Tool is null when the tool has no string name.
	Tool            *string          `json:"tool"`
	Classes         []string         `json:"classes"`
	RequiredClasses []string         `json:"required_classes"`
	Buckets         []string         `json:"buckets"`
	Properties      []PropertyLabels `json:"properties"`
	// Sensitivity is set only when asked for (classify --sensitivity).
	Sensitivity *SensitivityLabels `json:"sensitivity,omitempty"`
	// DefinitionSHA256 is the tool's definition hash in hex, set only when
	// the Labeller was asked for it (WithDefinitionHash); it is not part of
	// classify's output.
	DefinitionSHA256 string `json:"-"`
	// offset is where the tool object starts in its document.
	offset int
}

// PropertyLabels is the classification of one enumerated property.
type PropertyLabels struct {
	Name string `json:"name"`
	// Where is "properties", "definitions/<key>" or "$defs/<key>".
	Where    string   `json:"where"`
	Required bool     `json:"required"`
	Classes  []string `json:"classes"`
	Buckets  []string `json:"buckets"`
}

// Origin says where a tool was read, for SARIF locations and messages.
type Origin struct {
	// File is the input's name, or "stdin" for standard input; a server's
	// URL for scan.
	File string
	// Line is the 1-based line where the tool stands: the line of its
	// record in JSON Lines, the line of the tool object's '{' in a
	// document that spans many lines.
	Line int64
}

// AppendJSON appends t as one line of JSON (with its newline) in the key
// order of the classify output, the keys and values json.Marshal gives
// (in Python's spacing, and without escaping <, > and &). Strings are the decoder's WTF-8: a lone
// surrogate is written as its \udXXX escape, as Python's json writes it, and
// any other invalid byte as \ufffd.
func (t *ToolLabels) AppendJSON(b []byte) []byte {
	b = append(b, `{"server_id": `...)
	b = appendOptString(b, t.ServerID)
	b = append(b, `, "tool": `...)
	b = appendOptString(b, t.Tool)
	b = append(b, `, "classes": `...)
	b = appendStrings(b, t.Classes)
	b = append(b, `, "required_classes": `...)
	b = appendStrings(b, t.RequiredClasses)
	b = append(b, `, "buckets": `...)
	b = appendStrings(b, t.Buckets)
	b = append(b, `, "properties": `...)
	b = pythonStyle.appendProperties(b, t.Properties)
	if t.Sensitivity != nil {
		b = append(b, `, "sensitivity": `...)
		b = t.Sensitivity.appendJSON(b)
	}
	return append(b, "}\n"...)
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return census.AppendJSONString(b, *s)
}

func appendStrings(b []byte, ss []string) []byte { return appendList(b, ss, ", ") }

// appendList appends ss as a JSON array of strings, sep between elements.
func appendList(b []byte, ss []string, sep string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, sep...)
		}
		b = census.AppendJSONString(b, s)
	}
	return append(b, ']')
}

// jsonStyle is the spacing of one of the two encodings of a tool's
// labels: classify's line (Python's json.dumps spacing) or the compact
// _meta object; one property writer serves both, so that they cannot
// drift apart.
type jsonStyle struct {
	item, key string // between items, between a key and its value
	buckets   bool   // the non-normative buckets are written
}

var (
	pythonStyle  = jsonStyle{item: ", ", key: ": ", buckets: true}
	compactStyle = jsonStyle{item: ",", key: ":"}
)

// appendKey appends a key and its separator, after the item separator
// unless it is an object's first key.
func (s jsonStyle) appendKey(b []byte, key string, first bool) []byte {
	if !first {
		b = append(b, s.item...)
	}
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, '"')
	return append(b, s.key...)
}

// appendProperties appends ps as a JSON array of property objects:
// name, where, required, classes, then buckets when the style has them.
func (s jsonStyle) appendProperties(b []byte, ps []PropertyLabels) []byte {
	b = append(b, '[')
	for i := range ps {
		p := &ps[i]
		if i > 0 {
			b = append(b, s.item...)
		}
		b = append(b, '{')
		b = s.appendKey(b, "name", true)
		b = census.AppendJSONString(b, p.Name)
		b = s.appendKey(b, "where", false)
		b = census.AppendJSONString(b, p.Where)
		b = s.appendKey(b, "required", false)
		if p.Required {
			b = append(b, "true"...)
		} else {
			b = append(b, "false"...)
		}
		b = s.appendKey(b, "classes", false)
		b = appendList(b, p.Classes, s.item)
		if s.buckets {
			b = s.appendKey(b, "buckets", false)
			b = appendList(b, p.Buckets, s.item)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// AppendMeta appends t's labels as the compact JSON object (no spaces) a
// listed tool's _meta carries them in: classes, required_classes, and per
// property its name, where, required and classes (the non-normative
// buckets are left out: they are not risk classes), then rules, the name
// of the decision rules they follow, which the caller gives. label owns
// this encoding beside classify's line (AppendJSON) so that the two agree
// on every string's escaping.
func (t *ToolLabels) AppendMeta(b []byte, rules string) []byte {
	b = append(b, `{"classes":`...)
	b = appendList(b, t.Classes, ",")
	b = append(b, `,"required_classes":`...)
	b = appendList(b, t.RequiredClasses, ",")
	b = append(b, `,"properties":`...)
	b = compactStyle.appendProperties(b, t.Properties)
	b = append(b, `,"rules":`...)
	b = census.AppendJSONString(b, rules)
	return append(b, '}')
}

// SensitivityLabels is what the variants add to one tool, as the classify
// command prints it with --sensitivity.
type SensitivityLabels struct {
	CamelCase VariantLabels `json:"camel_case"`
	WordSplit VariantLabels `json:"word_split"`
	Deep      DeepLabels    `json:"deep"`
}

// VariantLabels are the classes and required classes a name-splitting
// variant adds to a tool.
type VariantLabels struct {
	Classes         []string `json:"classes"`
	RequiredClasses []string `json:"required_classes"`
}

// DeepLabels are the classes the deep variant (nested properties) adds.
type DeepLabels struct {
	Classes []string `json:"classes"`
}

// appendJSON appends s as the value of the "sensitivity" key.
func (s *SensitivityLabels) appendJSON(b []byte) []byte {
	b = append(b, `{"camel_case": {"classes": `...)
	b = appendStrings(b, s.CamelCase.Classes)
	b = append(b, `, "required_classes": `...)
	b = appendStrings(b, s.CamelCase.RequiredClasses)
	b = append(b, `}, "word_split": {"classes": `...)
	b = appendStrings(b, s.WordSplit.Classes)
	b = append(b, `, "required_classes": `...)
	b = appendStrings(b, s.WordSplit.RequiredClasses)
	b = append(b, `}, "deep": {"classes": `...)
	b = appendStrings(b, s.Deep.Classes)
	return append(b, "}}"...)
}
