package synth

import (
	"strings"
	"unicode/utf8"
)

// The malformed-but-valid corners: JSON that Python reads without complaint
// and that a hand-written decoder can easily read differently. Each mutates
// the tool model, so the ground truth follows whatever it did.
var corners = []func(g *gen, t *tool){
	cornerPropsNotObject,
	cornerRequiredNotList,
	cornerRequiredNonStrings,
	cornerPropNotObject,
	cornerDescNotString,
	cornerDescDuplicate,
	cornerDuplicatePropertiesKey,
	cornerDuplicatePropName,
	cornerNonFinite,
	cornerEscapedName,
	cornerLoneSurrogate,
	cornerUnicodeTrap,
	cornerScriptAdjacent,
	cornerMoneyPhrase,
	cornerPlacement,
	cornerDefs,
	cornerDraft3Required,
	cornerToolName,
}

// corner applies corner i (an index into corners).
func (g *gen) corner(t *tool, i int) {
	if t.top.propsKind != kObject {
		t.top.propsKind = kObject
	}
	if len(t.top.props) == 0 {
		g.addMember(&t.top, g.newMember(pick(g, g.v.neutral)), 0.5)
		if len(t.top.req) > 0 {
			t.top.reqKind = kArray
		}
	}
	corners[i](g, t)
}

func (g *gen) anyMember(t *tool) *member { return &t.top.props[g.intn(len(t.top.props))] }

// objectMember returns a member whose value is an object (there is always
// one after corner's preparation, and no corner runs twice on a tool).
func (g *gen) objectMember(t *tool) *member {
	for range 8 {
		if m := g.anyMember(t); m.kind == kObject && m.deco&decoRef == 0 {
			return m
		}
	}
	m := &t.top.props[0]
	m.kind, m.deco, m.typ = kObject, m.deco&^decoRef, "string"
	return m
}

func cornerPropsNotObject(g *gen, t *tool) {
	t.top.propsKind = pick(g, []uint8{kArray, kNull, kString})
	if g.chance(0.3) && len(t.defs) == 0 {
		// Definitions are still enumerated when properties is unusable.
		g.addDefs(t, nil)
	}
}

func cornerRequiredNotList(g *gen, t *tool) {
	t.top.reqKind = pick(g, []uint8{kString, kObject, kBool})
	if len(t.top.req) == 0 {
		t.top.req = append(t.top.req, reqItem{name: t.top.props[0].name, kind: kString})
	}
}

func cornerRequiredNonStrings(g *gen, t *tool) {
	t.top.reqKind = kArray
	for range 1 + g.intn(2) {
		r := reqItem{kind: pick(g, []uint8{kNumber, kNull, kBool, kObject, kArray})}
		if r.kind == kObject || r.kind == kArray {
			// A property name inside a list or object: not a string, so
			// not required.
			r.name = g.anyMember(t).name
		}
		t.top.req = append(t.top.req, reqItem{})
		at := g.intn(len(t.top.req))
		copy(t.top.req[at+1:], t.top.req[at:])
		t.top.req[at] = r
	}
}

// cornerPropNotObject turns the first property's value into a non-object (a
// bare type name, true, null, a number or a list): it is still enumerated,
// with an empty description. The first position keeps it recognisable in the
// bytes.
func cornerPropNotObject(g *gen, t *tool) {
	m := &t.top.props[0]
	m.kind = pick(g, []uint8{kString, kBool, kNull, kNumber, kArray})
	if g.chance(0.5) && !t.top.requires(m.name) {
		t.top.req = append(t.top.req, reqItem{name: m.name, kind: kString})
		t.top.reqKind = kArray
	}
}

func cornerDescNotString(g *gen, t *tool) {
	m := g.objectMember(t)
	m.descKind = pick(g, []uint8{kNull, kNumber, kBool, kArray, kObject})
	if m.desc == "" {
		// Text that would match if it were read as a description.
		m.desc = g.v.props[pick(g, g.v.pools[g.intn(len(g.v.pools))])].desc
	}
}

func cornerDescDuplicate(g *gen, t *tool) {
	m := g.objectMember(t)
	decoy := g.v.props[pick(g, g.v.pools[g.intn(len(g.v.pools))])].desc
	switch g.intn(3) {
	case 0: // a decoy first, the real description last
		m.desc0Kind, m.desc0 = kString, decoy
		if m.descKind != kString {
			m.descKind = kNull
		}
	case 1: // a real-looking description first, null last: ""
		m.desc0Kind, m.desc0 = kString, decoy
		m.descKind = kNull
	default: // null first, then the description
		m.desc0Kind = kNull
		if m.descKind != kString {
			m.desc, m.descKind = decoy, kString
		}
	}
}

func cornerDuplicatePropertiesKey(g *gen, t *tool) {
	t.top.shadow = true
	for range 1 + g.intn(2) {
		e := g.v.pools[g.intn(len(g.v.pools))]
		t.top.shadowP = append(t.top.shadowP, g.newMember(pick(g, e)))
	}
	if g.chance(0.25) {
		// The last "properties" is null: nothing of the first survives.
		t.top.propsKind = kNull
	}
}

// cornerDuplicatePropName repeats a property name with another value: the
// property keeps the position of the first and the value of the last. One
// of the two keys may be written with a \u escape, which a decoder must undo
// before it can see they are the same.
func cornerDuplicatePropName(g *gen, t *tool) {
	i := g.intn(len(t.top.props))
	first := &t.top.props[i]
	dup := g.newMember(pick(g, g.v.pools[g.intn(len(g.v.pools))]))
	dup.name = first.name
	switch g.intn(4) {
	case 0:
		dup.style = escLetter
	case 1:
		first.style = escLetter
	}
	at := i + 1
	if g.chance(0.5) {
		at += g.intn(len(t.top.props) - i)
	}
	t.top.props = append(t.top.props, member{})
	copy(t.top.props[at+1:], t.top.props[at:])
	t.top.props[at] = dup
}

func cornerNonFinite(g *gen, t *tool) {
	m := g.objectMember(t)
	m.typ = "number"
	m.deco &^= decoDefault | decoMinMax | decoEnum | decoFormat | decoItems | decoItemsObject | decoNested
	m.deco |= pick(g, []uint32{decoNaN, decoInf, decoNegInf})
}

// cornerEscapedName writes one ASCII letter of a property name as \u00XX,
// while the required array names it plainly (or the other way round).
func cornerEscapedName(g *gen, t *tool) {
	m := g.anyMember(t)
	if !strings.ContainsFunc(m.name, func(r rune) bool { return r < utf8.RuneSelf && isLetter(byte(r)) }) {
		m.name = "x" + m.name
	}
	if g.chance(0.7) {
		m.style = escLetter
	}
	found := false
	for j := range t.top.req {
		if t.top.req[j].kind == kString && t.top.req[j].name == m.name {
			found = true
			if m.style == escPlain {
				t.top.req[j].style = escLetter
			}
		}
	}
	if !found && g.chance(0.5) {
		r := reqItem{name: m.name, kind: kString}
		if m.style == escPlain {
			r.style = escLetter
		}
		t.top.req = append(t.top.req, r)
		t.top.reqKind = kArray
	}
}

// cornerLoneSurrogate puts a lone surrogate next to a word form in a
// description. Python keeps it as a non-word character, so the form is
// bounded; the neighbours are ASCII so that no two surrogates pair up.
func cornerLoneSurrogate(g *gen, t *tool) {
	m := g.objectMember(t)
	var r rune
	if g.chance(0.5) {
		r = 0xD800 + rune(g.intn(0x400))
	} else {
		r = 0xDC00 + rune(g.intn(0x400))
	}
	sur, form := wtf8Surrogate(r), pick(g, g.v.forms)
	s := adjoin(g, form, sur, " ")
	m.desc = joinDesc(m.effectiveDesc(), s+" value")
	m.descKind = kString
	if m.descStyle == escUnicode {
		m.descStyle = escPlain
	}
}

// adjoin glues a and b in one of three ways drawn from g: a then b, b
// then a, or a, sep and b.
func adjoin(g *gen, a, b, sep string) string {
	switch g.intn(3) {
	case 0:
		return a + b
	case 1:
		return b + a
	}
	return a + sep + b
}

func joinDesc(desc, extra string) string {
	if desc == "" {
		return extra
	}
	return desc + " " + extra
}

// The characters whose lowercase or case-insensitive matching differs
// between Python and naive implementations.
const (
	capIDot   = "\u0130" // İ: lowercases to "i" + U+0307
	dotlessI  = "\u0131" // ı: matches 'i' under IGNORECASE
	longS     = "\u017F" // ſ: matches 's'
	kelvin    = "\u212A" // K: lowercases to 'k'
	combining = "\u0307"
)

var trapped = []string{"ſecret", "paſſword", "ſql", "ſcript", "to" + kelvin + "en", "api" + kelvin + "ey", "ban" + kelvin, "ur" + dotlessI, "lın" + kelvin, "dır", "İd", "user_İd", "İtoken", "tokenİ", "İNSTRUCTION", "prİce", "TO" + kelvin + "EN", "hoſt", "ſum", "ſecret_" + kelvin + "ey"}

// cornerUnicodeTrap puts a form spelled with İ, ı, ſ or the Kelvin sign into
// a property name or description.
func cornerUnicodeTrap(g *gen, t *tool) {
	var w string
	if g.chance(0.5) {
		w = pick(g, trapped)
	} else {
		w = trapForm(g, pick(g, g.v.forms))
	}
	m := g.objectMember(t)
	if g.chance(0.5) {
		m.name = w
		return
	}
	m.desc, m.descKind = joinDesc(m.effectiveDesc(), "the "+w+" to use"), kString
}

// trapForm replaces one letter of form with a character that matches it
// only under Python's rules, or prefixes İ (whose combining dot bounds the
// form) or suffixes it (whose 'i' extends the form).
func trapForm(g *gen, form string) string {
	subs := []struct{ from, to string }{{"s", longS}, {"k", kelvin}, {"i", dotlessI}, {"i", capIDot}, {"K", kelvin}}
	for range 3 {
		s := subs[g.intn(len(subs))]
		if j := strings.Index(form, s.from); j >= 0 {
			return form[:j] + s.to + form[j+1:]
		}
	}
	if g.chance(0.5) {
		return capIDot + form
	}
	return form + capIDot
}

var scripts = []string{"令牌", "用户", "金额", "路径", "токен", "сумма", "ключ", "παράμετρος", "مفتاح", "キー", "주소", "α", "é"}

// cornerScriptAdjacent writes a form glued to letters of another script:
// they are outside [a-z0-9_], so the bounded forms still match, but they are
// \w, so the \b of the money phrases does not hold.
func cornerScriptAdjacent(g *gen, t *tool) {
	form, word := pick(g, g.v.forms), pick(g, scripts)
	if g.chance(0.2) {
		form = pick(g, []string{"amount in", "currency code", "monetary"})
	}
	w := adjoin(g, word, form, "_")
	m := g.objectMember(t)
	if g.chance(0.4) && !strings.Contains(w, " ") {
		m.name = w
		return
	}
	m.desc, m.descKind = joinDesc(m.effectiveDesc(), w), kString
}

var moneyPhrases = []string{
	"Amount in USD", "amount in cents", "The amount in the smallest currency unit", "Currency code (ISO 4217)",
	"three-letter currency code", "monetary value", "AMOUNT IN EUR", "amount  in", "amount_in", "amount-in cents",
	"金额amount in", "currency codes", "currency-code", "amount inß", "Monetary", "amount\u00a0in",
	"payment currency code", "(amount in)", "amount in\u00e9",
}

func cornerMoneyPhrase(g *gen, t *tool) {
	m := g.objectMember(t)
	m.desc, m.descKind = joinDesc(m.effectiveDesc(), pick(g, moneyPhrases)), kString
}

func cornerPlacement(g *gen, t *tool) {
	t.place = pick(g, []uint8{placeNullSnake, placeBoth, placeString, placeNone, placeNullOnly, placeSnake})
}

func cornerDefs(g *gen, t *tool) {
	if len(t.defs) == 0 {
		g.addDefs(t, nil)
	}
	blk := &t.defs[len(t.defs)-1]
	switch g.intn(4) {
	case 0: // the block is not an object: skipped whole
		blk.kind = kArray
	case 1: // an entry that is not an object (a boolean schema)
		blk.entries = append(blk.entries, defEntry{name: "Any", kind: kBool})
	case 2: // an entry whose properties is not an object
		e := defEntry{name: "Loose", kind: kObject}
		e.s.reset()
		g.fill(&e.s, 2, nil, true)
		e.s.propsKind = pick(g, []uint8{kNull, kString, kArray})
		blk.entries = append(blk.entries, e)
	default: // an entry without properties at all
		e := defEntry{name: "Status", kind: kObject}
		e.s.reset()
		e.s.propsKind, e.s.deco = kAbsent, sdEnumDef
		blk.entries = append(blk.entries, e)
	}
}

// cornerDraft3Required marks a property required the draft-3 way, inside
// the property: reference.py reads only the schema's required array.
func cornerDraft3Required(g *gen, t *tool) {
	m := g.objectMember(t)
	m.deco |= decoDraft3Req
}

func cornerToolName(g *gen, t *tool) {
	t.nameKind = pick(g, []uint8{kAbsent, kNumber})
}
