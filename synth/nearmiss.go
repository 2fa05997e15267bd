package synth

import (
	"strconv"
	"strings"
	"sync"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// The near-miss profile: small schemas whose property names and
// descriptions sit next to the rules' words without being them
// (pathology_code beside path, secretariat_note beside secret, "xamount in"
// beside amount), the shape of the held-back census on which the
// classifier's prefix scans and the decoder's per-property work cost most.
// Its vocabulary is small, so the file compresses about 10:1, and every
// tool carries a tag of its own, so no two tools share a definition and no
// memo applies.

// nearMissEntry is one property the profile can draw: a near-miss name, or
// a rule form in a near-miss description.
type nearMissEntry struct{ typ, name, desc string }

var (
	nearMissAffixes = []struct{ pre, suf string }{
		{"", "ology"}, {"", "iat"}, {"", "izer"}, {"", "ariat"}, {"x", ""},
		{"re", "ed"}, {"sub", "s"}, {"un", "er"}, {"", "ing"}, {"pre", ""},
	}
	nearMissNouns = strings.Fields("code note model id mode type level count name flag ref kind")
	nearMissWords = strings.Fields("in of for to on by")
	nearMissTypes = []string{"string", "string", "string", "integer", "boolean", "number", "array", "object"}
	// nearMissHand are the held-back census's own examples.
	nearMissHand = []nearMissEntry{
		{"string", "pathology_code", "pathology code"},
		{"string", "secretariat_note", "secretariat note"},
		{"string", "tokenizer_model", "tokenizer model"},
		{"number", "xamount", "xamount in"},
	}
)

// nearMisses derives the profile's vocabulary from the rules' forms, so that
// it follows the rules as they change.
var nearMisses = sync.OnceValue(func() []nearMissEntry {
	out := append([]nearMissEntry(nil), nearMissHand...)
	n := 0
	for _, r := range classify.Rules() {
		for _, f := range r.Forms {
			if strings.ContainsAny(f, "_- ") {
				continue
			}
			// Every affix with every noun: some ten thousand names, three
			// times that with their camelCase and kebab-case forms, so
			// that caches keyed by name miss as they do on the held-back
			// census.
			for i, a := range nearMissAffixes {
				w := a.pre + f + a.suf
				for j, noun := range nearMissNouns {
					out = append(out, nearMissEntry{
						typ:  nearMissTypes[(n+i+j)%len(nearMissTypes)],
						name: w + "_" + noun,
						desc: w + " " + nearMissWords[(n+i+j)%len(nearMissWords)],
					})
				}
			}
			n++
		}
	}
	return out
})

// nearMissMember makes a property from the near-miss vocabulary, in
// snake_case, camelCase or kebab-case.
func (g *gen) nearMissMember() member {
	e := pick(g, nearMisses())
	m := member{name: e.name, kind: kObject, typ: e.typ, desc: e.desc, descKind: kString}
	switch r := g.rng.Float64(); {
	case r < 0.25:
		m.name = rename(m.name, true)
	case r < 0.4:
		m.name = rename(m.name, false)
	}
	if g.chance(0.3) {
		m.descKind = kAbsent
	}
	switch e.typ {
	case "string":
		if g.chance(0.1) {
			m.deco |= decoAnyOf
		}
	case "array":
		if g.chance(0.5) {
			m.deco |= decoItems
		}
	case "object":
		if g.chance(0.5) {
			m.deco |= decoNested
		}
	}
	return m
}

// nearMissCommonTools is how many of the stock's tools are common.
const nearMissCommonTools = 128

// nearMissPropCount draws zero to a few properties.
func (g *gen) nearMissPropCount() int {
	switch r := g.rng.Float64(); {
	case r < 0.12:
		return 0
	case r < 0.42:
		return 1
	case r < 0.7:
		return 2
	case r < 0.87:
		return 3
	case r < 0.95:
		return 4
	}
	return 5 + g.intn(3)
}

// fillNearMiss gives s k properties, about half of them near-misses.
func (g *gen) fillNearMiss(s *schema, k int, srv *server) {
	for tries := 0; len(s.props) < k && tries < 2*k; tries++ {
		switch r := g.rng.Float64(); {
		case r < 0.5:
			g.addMember(s, g.nearMissMember(), 0.3)
		case r < 0.58:
			i := g.intn(len(labelBits))
			g.addMember(s, g.newMember(g.pickPool(g.v.pools[i])), reqProb[i])
		default:
			idx := pick(g, srv.house)
			g.addMember(s, g.newMember(idx), neutralReqProb)
		}
	}
	if len(s.req) > 0 {
		s.reqKind = kArray
	}
}

// nearMissTag is the tag that keeps tool i of the server with tag srvTag
// apart from every other tool.
func nearMissTag(srvTag string, i int) string {
	return srvTag + "." + strconv.Itoa(i)
}

// buildNearMissTool is buildTool for the near-miss profile.
func (g *gen) buildNearMissTool(srv *server) *tool {
	t := &g.t
	t.reset()
	// Most tools have one of the common names and descriptions; the
	// rest draw on the whole stock.
	te := pick(g, g.v.tools)
	if g.chance(0.95) {
		te = g.v.tools[g.intn(min(nearMissCommonTools, len(g.v.tools)))]
	}
	t.name = te.name
	if g.chance(0.25) {
		t.name = rename(t.name, g.chance(0.5))
	}
	t.desc = shortDesc(te.desc) + " [" + nearMissTag(srv.tag, srv.built) + "]"
	srv.built++
	if srv.tmpl == nil {
		// The server's tools vary one schema, as generated servers' do:
		// that is what makes the held-back census compress 10:1.
		srv.tmpl = &schema{}
		srv.tmpl.reset()
		g.fillNearMiss(srv.tmpl, g.nearMissPropCount(), srv)
		switch r := g.rng.Float64(); {
		case r < 0.45:
		case r < 0.8:
			srv.tmpl.deco |= sdAdditional
		case r < 0.95:
			srv.tmpl.deco |= sdAdditional | sdSchemaURI
		default:
			srv.tmpl.deco |= sdSchemaURI
		}
	}
	switch k := g.nearMissPropCount(); {
	case g.chance(0.85) && len(srv.tmpl.props) > 0:
		// The server's schema, the first few of its properties, and
		// now and then one of the tool's own.
		keep := len(srv.tmpl.props) - g.intn(min(2, len(srv.tmpl.props)))
		for _, m := range srv.tmpl.props[:keep] {
			g.addMember(&t.top, m, 0)
			if srv.tmpl.requires(m.name) {
				t.top.req = append(t.top.req, reqItem{name: m.name, kind: kString})
			}
		}
		if g.chance(0.25) {
			g.addMember(&t.top, g.nearMissMember(), 0.3)
		}
		if len(t.top.req) > 0 {
			t.top.reqKind = kArray
		}
	case k == 0:
		if g.chance(0.4) {
			t.top.propsKind = kAbsent
		}
	default:
		g.fillNearMiss(&t.top, k, srv)
	}
	// One generator wrote the server's schemas: they carry the same
	// additionalProperties and $schema decorations.
	t.top.deco |= srv.tmpl.deco
	if g.chance(0.05) {
		g.addDefs(t, srv)
	}
	if g.chance(0.01) {
		g.styleSomething(t)
	}
	return t
}

// nearMissPool is how many entries of each vocabulary pool the near-miss
// profile draws on.
const nearMissPool = 24

// pickPool picks an entry of a vocabulary pool: any entry, or in the
// near-miss profile one of its first few, so that they recur within gzip's
// window. Outside that profile it draws exactly as pick does.
func (g *gen) pickPool(pool []int32) int32 {
	if g.near {
		pool = pool[:min(nearMissPool, len(pool))]
	}
	return pick(g, pool)
}
