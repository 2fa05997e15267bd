package classify

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// SurfaceSet is a set of tool-surface signals, one bit per SurfaceRule.
type SurfaceSet uint8

// The tool-surface signals. They describe what a tool does (from its name and
// description), not what its parameters carry, and are not risk classes.
const (
	// HighConsequence: payment or money, filesystem write or delete, command
	// or code execution, infrastructure deployment, credential handling.
	HighConsequence SurfaceSet = 1 << iota
	// OutboundNetwork: sending, posting, fetching, uploading, downloading,
	// webhooks, HTTP: traffic to or from external hosts.
	OutboundNetwork
	// ReadRetrieval: read, get, list, search, fetch, query, retrieve style
	// tools.
	ReadRetrieval
)

// SurfaceClause is one aspect of a surface signal: it holds when the haystack
// contains a word of every one of its lists (each anywhere, in any order).
// One list means "any of these words"; two lists pair a verb with its object
// ("delete" and "file"), since either word alone says too little.
type SurfaceClause struct {
	Aspect string
	Words  [][]string
}

// SurfaceRule is one tool-surface signal: its identifier, its bit, the
// clauses that raise it (any one suffices), and Rule, the same definition as
// text for the report.
type SurfaceRule struct {
	ID      string
	Title   string
	Bit     SurfaceSet
	Clauses []SurfaceClause
	// Rule is generated from Clauses, so the text in the report cannot drift
	// from what the matcher does.
	Rule string
}

// SurfaceRules returns the tool-surface signals (a copy); see surfaceRules.
func SurfaceRules() []SurfaceRule {
	out := make([]SurfaceRule, len(surfaceRules))
	for i, r := range surfaceRules {
		r.Clauses = slices.Clone(r.Clauses)
		for j := range r.Clauses {
			r.Clauses[j].Words = slices.Clone(r.Clauses[j].Words)
			for k := range r.Clauses[j].Words {
				r.Clauses[j].Words[k] = slices.Clone(r.Clauses[j].Words[k])
			}
		}
		out[i] = r
	}
	return out
}

// surfaceRules are the tool-surface signals: a non-normative approximation of
// the spec's tool-surface analysis, kept apart from the normative Rules. The
// spec publishes the figures but not the rules that produced them (they live
// in the archived suite), so these word lists are ours, and the report prints
// them beside every figure. They are not tuned to reproduce the published
// numbers.
//
// Surface matches them against one haystack per tool, the tool name and
// description, lowercased and bounded like the classes:
//
//	lower(split(name) + " : " + description)
//
// A word counts when it is a whole maximal run of [a-z0-9_] characters, as
// the class forms are. Tool names are identifiers far more often than
// property names are prose, so for these rules only the name is split into
// words: at '_', and at ASCII case changes ("sendEmail" is "send email",
// "HTTPRequest" is "http request"); '-', '.' and '/' already bound words.
// Descriptions are not split: "delete_file" in prose stays one token, as it
// does for the classes. Inside either, a whitespace-delimited stretch that
// contains "://" (a link, "https://example.com/pay") is skipped from the
// start of the word before "://" to the next whitespace: links in
// descriptions would otherwise read as "https" and as whatever words their
// paths hold.
//
// The pipeline turns the signals into the two figures of SurfaceFigures:
// tools with HighConsequence and either OutboundNetwork or a property
// labelled gg:url-endpoint (spec: 995 tools, 0.43% of live tools); and tools
// with ReadRetrieval, with the number of distinct servers among them (spec:
// 67,423 tools across 11,520 servers).
var surfaceRules = []SurfaceRule{
	{
		ID: "high-consequence", Title: "High-consequence tool", Bit: HighConsequence,
		Clauses: []SurfaceClause{
			clause("payment or money",
				"pay pays paying paid payment payments payout payouts refund refunds refunded refunding "+
					"charge charges charged charging purchase purchases purchased purchasing buy buys buying "+
					"sell sells selling checkout withdraw withdraws withdrawal withdrawals deposit deposits "+
					"transfer transfers transferred transferring money funds"),
			clause("filesystem write or delete",
				"write writes writing overwrite overwrites delete deletes deleting remove removes removing "+
					"move moves rename renames create creates save saves append appends edit edits modify modifies truncate",
				"file files filesystem directory directories folder folders dir path paths disk"),
			clause("filesystem write or delete", "mkdir rmdir unlink rm"),
			clause("command or code execution", "exec eval shell bash powershell subprocess repl"),
			clause("command or code execution",
				"run runs running execute executes executing execution invoke invokes",
				"command commands script scripts code shell terminal process program cmd snippet python javascript"),
			clause("infrastructure deployment",
				"deploy deploys deploying redeploy undeploy provision provisions provisioning terraform kubectl"),
			clause("infrastructure deployment",
				"create creates delete deletes destroy destroys scale scales restart restarts reboot reboots "+
					"terminate terminates launch launches stop stops start starts",
				"instance instances cluster clusters vm vms container containers pod pods deployment deployments "+
					"infrastructure droplet droplets"),
			clause("credential handling", "password passwords passwd passphrase credential credentials keychain keystore"),
			clause("credential handling",
				"create creates generate generates rotate rotates revoke revokes refresh refreshes reset resets regenerate",
				"secret secrets token tokens key keys apikey api_key private_key access_key"),
		},
	},
	{
		ID: "outbound-network", Title: "Outbound-network tool", Bit: OutboundNetwork,
		Clauses: []SurfaceClause{
			clause("sending or posting",
				"send sends sending post posting posted publish publishes publishing webhook webhooks"),
			clause("fetching or transfer to or from external hosts",
				"fetch fetches fetching upload uploads uploaded uploading download downloads downloading "+
					"scrape scrapes scraping crawl crawls crawling navigate navigates"),
			clause("network protocols", "http https smtp ftp sftp curl wget"),
		},
	},
	{
		ID: "read-retrieval", Title: "Read/retrieval tool", Bit: ReadRetrieval,
		Clauses: []SurfaceClause{
			clause("read or retrieval",
				"read reads reading get gets getting list lists listing search searches searching "+
					"fetch fetches fetching query queries querying retrieve retrieves retrieving "+
					"find finds finding lookup show shows view views browse describe describes"),
		},
	},
}

// SurfaceFigure is one tool-surface figure of the report: the tools whose
// signals satisfy it, with the definition as text. A tool counts when its
// SurfaceSet holds every bit of Need and, if AnyOf or OrClasses is set, a bit
// of AnyOf or a property labelled with a class of OrClasses.
type SurfaceFigure struct {
	ID    string
	Title string
	Need  SurfaceSet
	AnyOf SurfaceSet
	// OrClasses are the parameter classes that stand in for AnyOf: an
	// outbound URL parameter is outbound surface whatever the name says.
	OrClasses Set
	// CountServers asks for the number of distinct servers among the tools
	// as well.
	CountServers bool
	// Rule is the complete definition for the report, generated from the
	// signals it uses.
	Rule string
}

// Counts reports whether a tool with surface signals s and class labels
// classes (any of its properties) counts in the figure.
func (f *SurfaceFigure) Counts(s SurfaceSet, classes Set) bool {
	if s&f.Need != f.Need {
		return false
	}
	if f.AnyOf == 0 && f.OrClasses == 0 {
		return true
	}
	return s&f.AnyOf != 0 || classes&f.OrClasses != 0
}

// SurfaceFigures returns the spec's two tool-surface figures as this
// package approximates them (non-normative; see SurfaceRules), as a copy.
func SurfaceFigures() []SurfaceFigure { return slices.Clone(surfaceFigures) }

// surfaceFigures are the figures; see SurfaceFigures.
var surfaceFigures = []SurfaceFigure{
	{
		ID: "high-consequence-outbound", Title: "High-consequence × outbound-network tools",
		Need: HighConsequence, AnyOf: OutboundNetwork, OrClasses: URLEndpoint,
	},
	{
		ID: "read-retrieval", Title: "Read/retrieval tools",
		Need: ReadRetrieval, CountServers: true,
	},
}

// clause builds a SurfaceClause from space-separated word lists.
func clause(aspect string, lists ...string) SurfaceClause {
	c := SurfaceClause{Aspect: aspect}
	for _, l := range lists {
		c.Words = append(c.Words, strings.Fields(l))
	}
	return c
}

// surfaceHaystack is the part of every rule text that says what is matched.
const surfaceHaystack = `Matched on lower(name split into words + " : " + description): ` +
	`the name is split at "_" and at case changes ("sendEmail" reads "send email"); ` +
	`a word counts only as a whole run of [a-z0-9_] characters, as for the classes; ` +
	`links (text containing "://") are skipped. Non-normative: our approximation, not the archived suite's rule.`

// ruleText writes the clauses of a signal as one phrase per aspect; clauses
// that share an aspect are its alternatives.
func ruleText(r *SurfaceRule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The %s signal is any of: ", r.ID)
	for i, c := range r.Clauses {
		switch {
		case i == 0:
			fmt.Fprintf(&b, "%s: ", c.Aspect)
		case c.Aspect == r.Clauses[i-1].Aspect:
			b.WriteString(", or ")
		default:
			fmt.Fprintf(&b, "; %s: ", c.Aspect)
		}
		for j, words := range c.Words {
			if j > 0 {
				b.WriteString(" and ")
			}
			fmt.Fprintf(&b, "a word of {%s}", strings.Join(words, ", "))
		}
	}
	b.WriteString(".")
	return b.String()
}

func surfaceRuleOf(b SurfaceSet) *SurfaceRule {
	for i := range surfaceRules {
		if surfaceRules[i].Bit == b {
			return &surfaceRules[i]
		}
	}
	return nil
}

// The surface words are looked up in a run table (table.go) whose values are
// list bits: every distinct word gets the bits of the lists it is in (a word
// may sit in several lists: "fetch" is both outbound and read). A clause is
// compiled to masks over those bits.
var surfaceWords, surfaceClauses = compileSurface()

// compiledClause is a clause as masks over list bits: it holds when every
// mask meets the words seen.
type compiledClause struct {
	bit   SurfaceSet
	lists []uint64
}

// compileSurface numbers the word lists of SurfaceRules, indexes their
// words and compiles the clauses.
func compileSurface() (*runTable, []compiledClause) {
	var words []runWord
	var clauses []compiledClause
	list := 0
	for _, r := range surfaceRules {
		for _, c := range r.Clauses {
			cc := compiledClause{bit: r.Bit}
			for _, ws := range c.Words {
				if list == 64 {
					panic("classify: more than 64 surface word lists")
				}
				for _, w := range ws {
					words = append(words, runWord{word: w, value: 1 << list})
				}
				cc.lists = append(cc.lists, 1<<list)
				list++
			}
			clauses = append(clauses, cc)
		}
	}
	return newRunTable(words), clauses
}

// The rule texts are generated from the rules, so the text in the report
// cannot drift from what the matcher does.
func init() {
	for i := range surfaceRules {
		surfaceRules[i].Rule = ruleText(&surfaceRules[i])
	}
	for i := range surfaceFigures {
		f := &surfaceFigures[i]
		var b strings.Builder
		fmt.Fprintf(&b, "Tools with the %s signal", surfaceRuleOf(f.Need).ID)
		if f.AnyOf != 0 || f.OrClasses != 0 {
			b.WriteString(" and either")
			var alts []string
			if r := surfaceRuleOf(f.AnyOf); r != nil {
				alts = append(alts, "the "+r.ID+" signal")
			}
			for _, id := range f.OrClasses.IDs(Classes) {
				alts = append(alts, "a property labelled "+id)
			}
			b.WriteString(" " + strings.Join(alts, " or "))
		}
		if f.CountServers {
			b.WriteString("; servers are the distinct server ids among them")
		}
		b.WriteString(".")
		for _, bit := range []SurfaceSet{f.Need, f.AnyOf} {
			if r := surfaceRuleOf(bit); r != nil {
				b.WriteString(" " + r.Rule)
			}
		}
		b.WriteString(" " + surfaceHaystack)
		f.Rule = b.String()
	}
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

func isLowerOrDigit(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// nameBreak reports whether the name splits before s[i], an upper-case ASCII
// letter: after a lower-case letter or digit ("sendEmail", "s3Upload"), or
// after an upper-case letter when a lower-case one follows, which ends an
// acronym ("HTTPRequest").
func nameBreak[T ~string | ~[]byte](s T, i int) bool {
	if i == 0 {
		return false
	}
	p := s[i-1]
	return isLowerOrDigit(p) || isUpper(p) && i+1 < len(s) && 'a' <= s[i+1] && s[i+1] <= 'z'
}

var linkMark = []byte("://")

// Surface returns the tool-surface signals of a tool from its name and
// description (see SurfaceRules for what is matched). Strings are UTF-8;
// invalid bytes bound words like any non-word character. It does not
// allocate.
func Surface(name, description []byte) SurfaceSet {
	// The joint " : " ends the name's last word and any link skip, so
	// the description is scanned on its own: by the block scan when it is
	// ASCII without a link, else byte by byte.
	m := matcher{t: surfaceWords}
	scan(&m, name, splitName|skipLinks)
	lists := m.end()
	v, ok := uint64(0), false
	if !bytes.Contains(description, linkMark) {
		v, ok = asciiRuns(surfaceWords, description)
	}
	if !ok {
		m = matcher{t: surfaceWords}
		scan(&m, description, skipLinks)
		v = m.end()
	}
	return signals(lists | v)
}

// signals returns the signals whose clauses the word lists meet.
func signals(lists uint64) SurfaceSet {
	var s SurfaceSet
	for _, c := range surfaceClauses {
		if s&c.bit != 0 {
			continue
		}
		ok := true
		for _, m := range c.lists {
			if lists&m == 0 {
				ok = false
				break
			}
		}
		if ok {
			s |= c.bit
		}
	}
	return s
}

// IDs returns the identifiers of the signals in s, in SurfaceRules order.
func (s SurfaceSet) IDs() []string {
	var ids []string
	for i := range surfaceRules {
		if s&surfaceRules[i].Bit != 0 {
			ids = append(ids, surfaceRules[i].ID)
		}
	}
	return ids
}
