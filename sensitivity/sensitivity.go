// Package sensitivity measures what the spec's lexical rule misses: three
// non-normative variants of the property enumeration and naming, each
// compared with a tool's normative classes. Nothing here changes a normative
// label; the runner computes the variants beside the labels and reports them
// apart.
//
// For a tool whose normative properties carry the classes base:
//
//   - camel_case: the same properties, each name rewritten with an
//     underscore at every camelCase boundary (CamelCase), then classified
//     with its description as the spec does.
//   - word_split: the same, with a space at every boundary and in place of
//     every '_', '-' and '.' (WordSplit). Recall-oriented: it admits false
//     positives by design (total_results becomes "total results", money).
//   - deep: every entry of every "properties" object anywhere in the input
//     schema, reached through the keywords of DeepKeywords (see Deep).
//
// A variant adds a class to a tool when the class is in the variant's label
// set and not in base. For camel_case and word_split, a class is also added
// through a required property when a property in its object's required
// list carries it in the variant (and the tool did not have it).
//
// # Why only rewritten names are classified
//
// A class pattern cannot match across the " : " that joins name and
// description (no form or phrase holds ':'), and a match on either side
// sees the same neighbours whether the other side is there or not. So the
// labels of (name, description) are those of (name, "") together with those
// of ("", description), and the description's share is already in base. The
// classes a rewrite adds beyond base are therefore those of (rewritten name,
// "") beyond base, and a name the rewrite leaves unchanged adds nothing. The
// differential tests hold this to CPython applying the definitions
// literally.
package sensitivity

import (
	"github.com/atlas-reproduce/atlas-reproduce/census"
	"github.com/atlas-reproduce/atlas-reproduce/classify"
)

// Variants names the three variants in report order.
var Variants = []string{"camel_case", "word_split", "deep"}

// Added is what the variants add to one tool: classes (normative class bits
// only) that the variant's labels carry and the tool's normative labels do
// not.
type Added struct {
	CamelCase, CamelCaseRequired classify.Set
	WordSplit, WordSplitRequired classify.Set
	Deep                         classify.Set
}

// Any reports whether a variant adds anything.
func (a Added) Any() bool {
	return a.CamelCase|a.WordSplit|a.Deep != 0
}

// Analyzer computes Added for tools. It reuses its memory from tool to tool;
// give each goroutine its own. The zero value is ready to use.
type Analyzer struct {
	buf  []byte
	deep Deep
}

// Tool returns what the variants add to t, whose normative properties carry
// the classes base (the union of classify.PropertyBytes over t.Properties;
// bits outside classify.Classes are ignored).
func (a *Analyzer) Tool(t *census.Tool, base classify.Set) Added {
	base &= classify.Classes
	var ad Added
	for i := range t.Properties {
		p := &t.Properties[i]
		if !needsRewrite(p.Name) {
			continue
		}
		a.buf = CamelCase(a.buf[:0], p.Name)
		if len(a.buf) != len(p.Name) { // a boundary was found
			l := classify.PropertyBytes(a.buf, nil)
			ad.CamelCase |= l
			if p.Required {
				ad.CamelCaseRequired |= l
			}
		}
		a.buf = WordSplit(a.buf[:0], p.Name)
		if string(a.buf) != string(p.Name) {
			l := classify.PropertyBytes(a.buf, nil)
			ad.WordSplit |= l
			if p.Required {
				ad.WordSplitRequired |= l
			}
		}
	}
	ad.CamelCase &^= base
	ad.CamelCaseRequired &^= base
	ad.WordSplit &^= base
	ad.WordSplitRequired &^= base
	ad.CamelCase &= classify.Classes
	ad.CamelCaseRequired &= classify.Classes
	ad.WordSplit &= classify.Classes
	ad.WordSplitRequired &= classify.Classes
	if t.Schema != nil {
		ad.Deep = a.deep.Beyond(t.Schema) &^ base & classify.Classes
	}
	return ad
}

func needsRewrite(name []byte) bool {
	for _, c := range name {
		if mayChange[c] {
			return true
		}
	}
	return false
}
