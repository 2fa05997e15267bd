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
	"bytes"

	"github.com/atlas-reproduce/atlas-reproduce/label/census"
	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// Variants names the three variants in report order (a fresh slice).
func Variants() []string { return []string{"camel_case", "word_split", "deep"} }

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
	buf   []byte
	deep  Deep
	names nameCache
	// slots, when not zero, is the number of slots of the name cache
	// (tests make it small to make names collide).
	slots int
}

func (a *Analyzer) cacheSlots() int {
	if a.slots != 0 {
		return a.slots
	}
	return nameCacheSlots
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
		camel, word := a.names.rewrites(&a.buf, p.Name, a.cacheSlots())
		ad.CamelCase |= camel
		ad.WordSplit |= word
		if p.Required {
			ad.CamelCaseRequired |= camel
			ad.WordSplitRequired |= word
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
		// The decoder's tape, where it has one, spares a second lexing
		// of the schema's text.
		deep, ok := a.deep.BeyondTape(t)
		if !ok && mayHideProperties(t) {
			deep = a.deep.Beyond(t.Schema)
		}
		ad.Deep = deep &^ base & classify.Classes
	}
	return ad
}

// mayHideProperties reports whether t's schema text may hold a "properties"
// key the normative enumeration does not read; when it cannot, deep adds
// nothing and the walk is skipped. Each run of t.Properties with the same
// origin (the top level, or one definitions or $defs entry) comes from its
// own "properties" key. A key spelt with an escape needs a \u006X or
// \u007X escape (its letters are U+0065 to U+0074), and every other
// spelling is the literal "properties". So when there is no such escape and
// no more literal occurrences than runs, every "properties" key is one the
// enumeration read, and there is nothing else to find. The common flat
// schema costs three substring scans instead of a walk.
func mayHideProperties(t *census.Tool) bool {
	s := t.Schema
	runs := 0
	for i := range t.Properties {
		p := &t.Properties[i]
		if i == 0 || p.Where != t.Properties[i-1].Where || string(p.DefKey) != string(t.Properties[i-1].DefKey) {
			runs++
		}
	}
	// Count the literal occurrences, up to one more than runs. The needle
	// starts at 'p' rather than at the quote, far rarer in JSON text.
	n := 0
	for at := 0; ; {
		i := bytes.Index(s[at:], []byte(`properties"`))
		if i < 0 {
			break
		}
		j := at + i
		if j > 0 && s[j-1] == '"' {
			if n++; n > runs {
				return true
			}
		}
		at = j + len(`properties"`)
	}
	// One scan for \u00, the common prefix of both escapes.
	for {
		i := bytes.Index(s, []byte(`\u00`))
		if i < 0 {
			return false
		}
		if i+4 < len(s) && (s[i+4] == '6' || s[i+4] == '7') {
			return true
		}
		s = s[i+4:]
	}
}

func needsRewrite(name []byte) bool {
	for _, c := range name {
		if mayChange[c] {
			return true
		}
	}
	return false
}
