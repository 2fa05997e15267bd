package synth

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/atlas-reproduce/atlas-reproduce/label/classify"
)

// Tuning of the generated census. The pick probabilities raise each label to
// about the frequency the published table reports (the real schemas the
// vocabulary comes from are poorer in money and credentials and richer in
// paths); the required probabilities approach its "≥1 required" column.
var (
	// pickProb[i] is the chance that a tool receives one property from
	// pool i (labelBits order: url, command, money, credential, path, raw
	// content, account).
	pickProb = [len(labelBits)]float64{0.14, 0.10, 0.063, 0.064, 0.019, 0.145, 0.40}
	reqProb  = [len(labelBits)]float64{0.72, 0.58, 0.28, 0.22, 0.27, 0.5, 0.45}
)

const (
	neutralReqProb = 0.3
	mixedProb      = 0.01 // a property with two classes or more
	cornerProb     = 0.02 // tools that receive one of the malformed corners
	defsProb       = 0.05 // tools with a definitions or $defs block
	nestedProb     = 0.10 // members with a nested schema that is not enumerated
	renameProb     = 0.03 // snake_case names rewritten as kebab-case or camelCase
)

// Member decorations: what a property object says beyond type and
// description. None of them changes what is enumerated.
const (
	decoEnum uint32 = 1 << iota
	decoDefault
	decoNaN
	decoInf
	decoNegInf
	decoFormat
	decoMinMax
	decoItems
	decoItemsObject // "items" with its own properties: not enumerated
	decoNested      // "properties" inside the property: not enumerated
	decoAnyOf       // "anyOf" branches with properties: not enumerated
	decoDraft3Req   // draft-3 "required": true: not a required array
	decoRef         // only a "$ref" to a definition
)

// Schema and tool decorations.
const (
	sdNoType uint32 = 1 << iota
	sdAdditional
	sdSchemaURI
	sdAllOf // "allOf" with properties: not enumerated
	sdEnumDef
	tdAnnotations
	tdTitle
)

// counts is the ground truth of a run of records, summed chunk by chunk.
type counts struct {
	tools, servers int
	shapes         [3]int // server, tool, flat
	classTools     [5]int // in classify.Rules() order
	classReq       [5]int
	buckets        [2]int // raw_content_blob, account_identity
}

func (c *counts) add(o *counts) {
	c.tools += o.tools
	c.servers += o.servers
	for i := range c.shapes {
		c.shapes[i] += o.shapes[i]
	}
	for i := range c.classTools {
		c.classTools[i] += o.classTools[i]
		c.classReq[i] += o.classReq[i]
	}
	for i := range c.buckets {
		c.buckets[i] += o.buckets[i]
	}
}

const (
	shapeServer = iota
	shapeTool
	shapeFlat
)

// server is what the generator knows of one server.
type server struct {
	sid    string // as Python's str() of the decoded value gives it
	sidInt bool   // written as a JSON integer (sometimes as a string)
	slug   string
	owner  string
	url    string
	tools  int
	house  []int32 // neutral properties its tools share
	tag    string  // serverTag of its index
	built  int     // tools built so far (the near-miss profile's tags)
	tmpl   *schema // the near-miss profile's schema its tools vary
}

// gen generates one chunk of servers. It is not safe for concurrent use;
// each chunk has its own.
type gen struct {
	rng     *rand.Rand
	v       *vocabulary
	shape   string
	t       tool
	scratch []byte
	sids    map[string]struct{}
	c       counts
	dense   bool // Options.Dense
	near    bool // Options.NearMiss
}

func newGen(seed uint64, chunk int, shape string) *gen {
	return &gen{
		rng:   rand.New(rand.NewPCG(seed, mix(seed^uint64(chunk)*0x9E3779B97F4A7C15+1))),
		v:     vocab(),
		shape: shape,
		sids:  make(map[string]struct{}),
	}
}

// mix is SplitMix64's finaliser: neighbouring chunk indices get unrelated
// PCG streams.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }
func (g *gen) intn(n int) int        { return g.rng.IntN(n) }

func pick[T any](g *gen, xs []T) T { return xs[g.rng.IntN(len(xs))] }

// ---------------------------------------------------------------------------
// Servers

var (
	syllables = strings.Fields("ka lo mi zen tor vex ar bel cor dax el fin gra hol is jun kev lum mar nor os pil qua ras sol tam ul vin wes xa yor zu")
	providers = []string{
		"https://server.smithery.ai/@%o/%s/mcp",
		"https://%s.%o.workers.dev/sse",
		"https://mcp.%s.com/mcp",
		"https://%s.vercel.app/api/mcp",
		"https://%s.fly.dev/mcp",
		"https://api.%s.io/v1/mcp",
		"https://%s.onrender.com/sse",
		"https://%o.github.io/%s/mcp",
	}
	transports = []string{"streamable-http", "streamable-http", "streamable-http", "sse"}
	sources    = []string{"smithery", "smithery", "mcp.so", "glama", "pulsemcp", "github", "official-registry"}
	protocols  = []string{"2025-06-18", "2025-06-18", "2025-03-26", "2024-11-05"}
)

func (g *gen) server(index, tools int) server {
	s := server{tools: tools}
	s.tag = serverTag(index)
	s.slug = pick(g, g.v.servers) + "-" + s.tag
	s.owner = pick(g, syllables) + pick(g, syllables)
	if g.chance(0.3) {
		s.owner += strconv.Itoa(g.intn(100))
	}
	tmpl := pick(g, providers)
	s.url = strings.NewReplacer("%s", s.slug, "%o", s.owner).Replace(tmpl)
	switch r := g.rng.Float64(); {
	case r < 0.002:
		// Beyond uint64 and apart only in the last digits: a decoder that
		// reads integers as float64 merges such servers.
		s.sid, s.sidInt = "9"+leftPad(strconv.Itoa(index), 20), true
	case r < 0.04:
		s.sid, s.sidInt = strconv.Itoa(100000+index), true
	case r < 0.32:
		s.sid = "smithery:@" + s.owner + "/" + s.slug
	default:
		s.sid = s.url
	}
	n := 2 + g.intn(5)
	for range n {
		s.house = append(s.house, pick(g, g.v.neutral))
	}
	return s
}

// serverTag returns a short base-36 tag that no other server index gets, so
// that slugs, URLs and ids are unique however often a vocabulary slug
// recurs: four characters for the first 36^4 servers, six after (a
// multiplication by a number prime to 36 permutes each range, which keeps
// neighbouring servers from looking sequential).
func serverTag(index int) string {
	const r4, r6 = 36 * 36 * 36 * 36, 36 * 36 * 36 * 36 * 36 * 36
	if index < r4 {
		return leftPad(strconv.FormatUint(uint64(index)*2654435761%r4, 36), 4)
	}
	return leftPad(strconv.FormatUint(uint64(index-r4)*2654435761%r6, 36), 6)
}

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

// appendSid writes the server id value; integer ids are sometimes written as
// strings, which Python's str() makes the same id.
func (g *gen) appendSid(b []byte, s *server) []byte {
	if s.sidInt && !g.chance(0.1) {
		return append(b, s.sid...)
	}
	return appendString(b, s.sid, escPlain)
}

// appendSidFields writes the server id under one of the aliases
// reference.py's server_id() accepts when alias is set, now and then after a
// first alias whose value server_id() skips (null, a boolean, a float).
func (g *gen) appendSidFields(b []byte, s *server, alias bool) []byte {
	key := "server_id"
	if alias {
		key = pick(g, []string{"server", "server_url", "url", "server"})
		if key == "server" || g.chance(0.5) {
			// A skipped value under an alias that comes first in
			// server_id()'s order.
			b = appendKey(b, "server_id")
			b = append(b, pick(g, []string{"null", "true", "false", "7.0", "1e3"})...)
			b = comma(b)
		}
	}
	b = appendKey(b, key)
	return g.appendSid(b, s)
}

// serverLine is the servers.jsonl record of s.
func (g *gen) serverLine(b []byte, s *server) []byte {
	b = append(b, '{')
	b = appendKey(b, "server_id")
	b = g.appendSid(b, s)
	b = appendKey(comma(b), "name")
	b = appendString(b, s.slug, escPlain)
	b = appendKey(comma(b), "url")
	b = appendString(b, s.url, escPlain)
	b = appendKey(comma(b), "transport")
	b = appendString(b, pick(g, transports), escPlain)
	b = appendKey(comma(b), "reachable")
	b = append(b, "true"...)
	b = appendKey(comma(b), "tool_count")
	b = appendInt(b, s.tools)
	b = appendKey(comma(b), "protocol_version")
	b = appendString(b, pick(g, protocols), escPlain)
	b = appendKey(comma(b), "server_info")
	b = append(b, '{')
	b = appendKey(b, "name")
	b = appendString(b, s.slug[:strings.LastIndexByte(s.slug, '-')], escPlain)
	b = appendKey(comma(b), "version")
	b = appendString(b, strconv.Itoa(g.intn(3))+"."+strconv.Itoa(g.intn(20))+"."+strconv.Itoa(g.intn(10)), escPlain)
	b = append(b, '}')
	b = appendKey(comma(b), "source")
	b = appendString(b, pick(g, sources), escPlain)
	b = appendKey(comma(b), "first_seen")
	b = appendString(b, date(g), escPlain)
	b = appendKey(comma(b), "checked_at")
	b = appendString(b, "2026-10-12T"+twoDigits(g.intn(24))+":"+twoDigits(g.intn(60))+":"+twoDigits(g.intn(60))+"Z", escPlain)
	return append(b, "}\n"...)
}

func date(g *gen) string {
	return "2025-" + twoDigits(1+g.intn(12)) + "-" + twoDigits(1+g.intn(28))
}

func twoDigits(n int) string {
	return string([]byte{byte('0' + n/10), byte('0' + n%10)})
}

var candStatus = []string{"duplicate", "http_401", "http_404", "http_405", "timeout", "tls_error", "dns_error", "not_mcp"}

// candidateLines writes the candidate remote endpoints that led to s: the
// reachable one and a few variants that did not answer, plus now and then a
// candidate that matched no server.
func (g *gen) candidateLines(b []byte, s *server) []byte {
	cand := func(b []byte, url, status string, sid bool) []byte {
		b = append(b, '{')
		b = appendKey(b, "url")
		b = appendString(b, url, escPlain)
		b = appendKey(comma(b), "source")
		b = appendString(b, pick(g, sources), escPlain)
		b = appendKey(comma(b), "status")
		b = appendString(b, status, escPlain)
		b = appendKey(comma(b), "server_id")
		if sid {
			b = g.appendSid(b, s)
		} else {
			b = append(b, "null"...)
		}
		b = appendKey(comma(b), "discovered")
		b = appendString(b, date(g), escPlain)
		return append(b, "}\n"...)
	}
	b = cand(b, s.url, "reachable", true)
	for range g.intn(3) {
		variant := s.url
		switch g.intn(3) {
		case 0:
			variant = strings.Replace(variant, "https://", "http://", 1)
		case 1: // the other transport's conventional path
			if v, ok := strings.CutSuffix(variant, "/mcp"); ok {
				variant = v + "/sse"
			} else {
				variant = strings.TrimSuffix(variant, "/sse") + "/mcp"
			}
		default:
			variant += "/"
		}
		b = cand(b, variant, pick(g, candStatus), g.chance(0.5))
	}
	if g.chance(0.15) {
		b = cand(b, "https://"+pick(g, g.v.servers)+"-"+strconv.Itoa(g.intn(1000))+".example.net/mcp", pick(g, candStatus[1:]), false)
	}
	return b
}

// ---------------------------------------------------------------------------
// Tools

func (g *gen) propCount() int {
	if g.dense {
		// About four a tool, fewer tools without any.
		if g.chance(0.02) {
			return 0
		}
		k := int(3.6*math.Exp(0.5*g.rng.NormFloat64()) + 0.5)
		return max(1, min(k, 60))
	}
	if g.chance(0.07) {
		return 0
	}
	k := int(math.Exp(0.8*g.rng.NormFloat64()) + 0.5)
	return max(1, min(k, 60))
}

// newMember makes a property from vocabulary entry idx.
func (g *gen) newMember(idx int32) member {
	e := &g.v.props[idx]
	m := member{name: e.name, kind: kObject, typ: e.typ, desc: e.desc, descKind: kString}
	if g.dense {
		m.desc = shortDesc(m.desc)
	}
	if e.desc == "" && !g.chance(0.1) {
		m.descKind = kAbsent
	}
	if g.chance(renameProb) {
		m.name = rename(m.name, g.chance(0.5))
	}
	switch e.typ {
	case "string":
		switch r := g.rng.Float64(); {
		case r < 0.03:
			m.deco |= decoEnum | decoDefault
		case r < 0.08:
			m.deco |= decoEnum
		case r < 0.5 && formatOf(m.name) != "":
			m.deco |= decoFormat
		}
	case "number", "integer":
		if g.chance(0.25) {
			m.deco |= decoMinMax
		}
		if g.chance(0.15) {
			m.deco |= decoDefault
		}
	case "boolean":
		if g.chance(0.3) {
			m.deco |= decoDefault
		}
	case "array":
		if !g.near && g.chance(nestedProb*3) {
			m.deco |= decoItemsObject
		} else if g.chance(0.7) {
			m.deco |= decoItems
		}
	case "object":
		if g.chance(0.5) {
			m.deco |= decoNested
		}
	}
	if (e.typ == "object" || e.typ == "string") && g.chance(nestedProb/3) {
		m.deco |= decoAnyOf
		m.deco &^= decoNested | decoEnum | decoDefault | decoFormat
	}
	return m
}

// shortDesc keeps the first words of a description, at most
// shortDescLen bytes of them: the dense census's properties carry
// descriptions of a few words, as generated SDK schemas do.
func shortDesc(desc string) string {
	if len(desc) <= shortDescLen {
		return desc
	}
	cut := strings.LastIndexByte(desc[:shortDescLen+1], ' ')
	if cut <= 0 {
		cut = shortDescLen
		for cut > 0 && !utf8.RuneStart(desc[cut]) {
			cut--
		}
	}
	return desc[:cut]
}

const shortDescLen = 32

// formatOf returns the JSON Schema format a property of this name would
// plausibly declare, or "".
func formatOf(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "url") || strings.Contains(n, "uri") || strings.Contains(n, "link"):
		return "uri"
	case strings.Contains(n, "email"):
		return "email"
	case strings.Contains(n, "date") || strings.HasSuffix(n, "time") || strings.HasSuffix(n, "_at"):
		return "date-time"
	case strings.HasSuffix(n, "uuid"):
		return "uuid"
	}
	return ""
}

// rename turns snake_case into kebab-case or camelCase: hyphens stay
// boundaries for the classes, camelCase joins the words into one token.
func rename(name string, camel bool) string {
	if !strings.Contains(name, "_") {
		return name
	}
	if !camel {
		return strings.ReplaceAll(name, "_", "-")
	}
	var b strings.Builder
	up := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_':
			up = true
		case up && c >= 'a' && c <= 'z':
			b.WriteByte(c - 32)
			up = false
		default:
			b.WriteByte(c)
			up = false
		}
	}
	return b.String()
}

func (g *gen) addMember(s *schema, m member, reqP float64) {
	for _, o := range s.props {
		if o.name == m.name {
			// Accidental duplicates are left to the dedicated corner.
			return
		}
	}
	s.props = append(s.props, m)
	if g.chance(reqP) {
		s.req = append(s.req, reqItem{name: m.name, kind: kString})
	}
}

// fill gives schema s about k properties: deliberate picks from the label
// pools, then neutral ones, half of them from the server's house set.
func (g *gen) fill(s *schema, k int, srv *server, picks bool) {
	if picks {
		for i := range labelBits {
			if g.chance(pickProb[i]) {
				g.addMember(s, g.newMember(g.pickPool(g.v.pools[i])), reqProb[i])
			}
		}
		if g.chance(mixedProb) {
			g.addMember(s, g.newMember(g.pickPool(g.v.mixed)), 0.5)
		}
	}
	for tries := 0; len(s.props) < k && tries < 2*k; tries++ {
		idx := g.pickPool(g.v.neutral)
		if srv != nil && g.chance(0.5) {
			idx = pick(g, srv.house)
		}
		g.addMember(s, g.newMember(idx), neutralReqProb)
	}
	g.rng.Shuffle(len(s.props), func(i, j int) { s.props[i], s.props[j] = s.props[j], s.props[i] })
	if len(s.req) > 0 {
		s.reqKind = kArray
	} else if len(s.props) > 0 && g.chance(0.2) {
		s.reqKind = kArray // an empty list
	}
}

var defNames = strings.Fields("Filter Options Address Item Config Pagination Auth Payment Target Range Query Settings Recipient Attachment Location Schedule Credentials Metadata")

func (g *gen) buildTool(srv *server) *tool {
	if g.near {
		return g.buildNearMissTool(srv)
	}
	t := &g.t
	t.reset()
	te := pick(g, g.v.tools)
	t.name, t.desc = te.name, te.desc
	if te.desc == "" {
		t.descKind = pick(g, []uint8{kString, kAbsent, kNull})
	}
	if g.chance(0.04) {
		t.place = placeSnake
	}
	if g.chance(0.03) {
		t.deco |= tdAnnotations
	}
	if g.chance(0.02) {
		t.deco |= tdTitle
	}
	k := g.propCount()
	if k == 0 {
		if g.chance(0.4) {
			t.top.propsKind = kAbsent
		}
	} else {
		g.fill(&t.top, k, srv, true)
	}
	switch r := g.rng.Float64(); {
	case r < 0.45:
	case r < 0.75:
		t.top.deco |= sdAdditional
	case r < 0.9:
		t.top.deco |= sdAdditional | sdSchemaURI
	case r < 0.95:
		t.top.deco |= sdSchemaURI
	default:
		t.top.deco |= sdNoType
	}
	if g.chance(nestedProb / 5) {
		t.top.deco |= sdAllOf
	}
	if g.chance(defsProb) {
		g.addDefs(t, srv)
	}
	if g.chance(0.01) {
		g.styleSomething(t)
	}
	if g.chance(cornerProb) {
		g.corner(t, g.intn(len(corners)))
	}
	return t
}

// addDefs moves the shape of a nested object into a definitions or $defs
// entry referenced from the top-level properties, the layout pydantic and
// zod-to-json-schema produce.
func (g *gen) addDefs(t *tool, srv *server) {
	key := "$defs"
	if g.chance(0.4) {
		key = "definitions"
	}
	blk := defsBlock{key: key, kind: kObject}
	for i := range 1 + g.intn(2) {
		name := pick(g, defNames)
		if i > 0 {
			name += strconv.Itoa(i + 1)
		}
		e := defEntry{name: name, kind: kObject}
		e.s.reset()
		g.fill(&e.s, 1+g.intn(4), srv, g.chance(0.5))
		blk.entries = append(blk.entries, e)
		ref := member{name: strings.ToLower(name[:1]) + name[1:], kind: kObject, deco: decoRef, ref: "#/" + key + "/" + name}
		if g.chance(0.3) {
			ref.desc, ref.descKind = pick(g, g.v.tools).desc, kString
		}
		g.addMember(&t.top, ref, 0.4)
		if t.top.reqKind == kAbsent && len(t.top.req) > 0 {
			t.top.reqKind = kArray
		}
	}
	t.defs = append(t.defs, blk)
}

// styleSomething writes one string of t with an unusual but equivalent
// escaping.
func (g *gen) styleSomething(t *tool) {
	style := pick(g, []uint8{escUnicode, escSlash, escLetter})
	if len(t.top.props) > 0 && g.chance(0.7) {
		m := &t.top.props[g.intn(len(t.top.props))]
		if g.chance(0.5) && style != escSlash {
			m.style = style
		} else {
			m.descStyle = style
		}
		return
	}
	t.descStyle = style
}

// classify reads the ground truth of t off its model and adds it to the
// counts.
func (g *gen) classify(t *tool) {
	var set, req classify.Set
	t.effective(func(name, desc string, required bool) {
		s := classify.Property(name, desc)
		set |= s
		if required {
			req |= s
		}
	})
	g.c.tools++
	for i := range g.c.classTools {
		bit := classify.Set(1) << i // the classes' bits are in Rules order
		if set&bit != 0 {
			g.c.classTools[i]++
		}
		if req&bit != 0 {
			g.c.classReq[i]++
		}
	}
	if set&classify.RawContentBlob != 0 {
		g.c.buckets[0]++
	}
	if set&classify.AccountIdentity != 0 {
		g.c.buckets[1]++
	}
}

// chunk generates the records of servers [first, first+len(tools)) into the
// three buffers and returns their ground truth.
func (g *gen) chunk(first int, tools []int32, st, sv, cand []byte) ([]byte, []byte, []byte, counts) {
	for i, n := range tools {
		srv := g.server(first+i, int(n))
		sv = g.serverLine(sv, &srv)
		cand = g.candidateLines(cand, &srv)
		if g.shape == ShapeServers {
			st = g.serverRecord(st, &srv)
		} else {
			st = g.toolRecords(st, &srv)
		}
	}
	// Ids are unique by construction across chunks (serverTag, index-based
	// integers); within the chunk they are counted as Python would.
	g.c.servers = len(g.sids)
	return st, sv, cand, g.c
}

func (g *gen) serverRecord(b []byte, srv *server) []byte {
	b = append(b, '{')
	late := g.chance(0.01)
	if !late {
		b = comma(g.appendSidFields(b, srv, g.chance(0.01)))
	}
	b = appendKey(b, "tools")
	b = append(b, '[')
	for i := range srv.tools {
		if i > 0 {
			b = comma(b)
		}
		t := g.buildTool(srv)
		g.classify(t)
		b = g.appendTool(b, t)
	}
	b = append(b, ']')
	if late {
		b = g.appendSidFields(comma(b), srv, false)
	}
	g.sids[srv.sid] = struct{}{}
	g.c.shapes[shapeServer]++
	return append(b, "}\n"...)
}

func (g *gen) toolRecords(b []byte, srv *server) []byte {
	for range srv.tools {
		t := g.buildTool(srv)
		g.classify(t)
		alias := g.chance(0.03)
		b = append(b, '{')
		if g.chance(0.04) {
			// A flat tool: the record is the tool, with a server id field.
			b = g.appendSidFields(b, srv, alias)
			n := len(b)
			b = g.appendToolFields(comma(b), t)
			if len(b) == n+2 {
				b = b[:n] // a tool without fields
			}
			b = append(b, '}')
			g.c.shapes[shapeFlat]++
		} else {
			late := g.chance(0.01)
			if !late {
				b = comma(g.appendSidFields(b, srv, alias))
			}
			b = appendKey(b, "tool")
			b = g.appendTool(b, t)
			if late {
				b = g.appendSidFields(comma(b), srv, alias)
			}
			b = append(b, '}')
			g.c.shapes[shapeTool]++
		}
		g.sids[srv.sid] = struct{}{}
		b = append(b, '\n')
	}
	return b
}
