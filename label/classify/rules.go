// Package classify assigns the five canonical gg: parameter risk classes, and
// the two non-normative contextual buckets, to a parameter property from its
// name and description.
//
// It is a pure function of (name, description): no I/O and no JSON. Labels
// equal those of the spec's Python reference, re.search(pattern,
// str.lower(name + " : " + description), re.IGNORECASE), on every input; the
// differential tests prove it against CPython. No regex engine runs in the hot
// path: see match.go, and ascii.go for the block scan that handles ASCII text.
package classify

import (
	"slices"
	"sort"
	"strings"
)

// Set is a set of labels, one bit per class or bucket.
type Set uint16

// The five normative classes, then the two non-normative buckets.
const (
	CredentialValue Set = 1 << iota
	FilesystemPath
	CommandString
	MoneyAmount
	URLEndpoint
	RawContentBlob
	AccountIdentity
)

// Classes is the set of the five normative classes; Buckets the two
// non-normative buckets.
const (
	Classes = CredentialValue | FilesystemPath | CommandString | MoneyAmount | URLEndpoint
	Buckets = RawContentBlob | AccountIdentity
)

// Rule is one class or bucket: its identifier, its bit, the bounded word forms
// its first pattern alternates, and the Python patterns as the spec writes
// them (kept as data for the report and the oracle tests).
type Rule struct {
	ID string
	// Bit is the label's bit in a Set.
	Bit Set
	// Normative is false for the high-recall buckets, which are not risk
	// classes and carry no containment semantics.
	Normative bool
	// Forms are the alternatives of the (?<![a-z0-9_])(...)(?![a-z0-9_]) pattern.
	Forms []string
	// Phrases are the alternatives of a \b(...)\b pattern (money only).
	Phrases []string
	// Patterns are the Python regular expressions, applied with re.IGNORECASE.
	Patterns []string
}

// Rules returns the classes in the spec's section order, then the buckets:
// a copy, which the caller may change.
func Rules() []Rule {
	out := make([]Rule, len(rules))
	for i := range rules {
		out[i] = rules[i].clone()
	}
	return out
}

// clone is r with slices of its own.
func (r *Rule) clone() Rule {
	c := *r
	c.Forms, c.Phrases, c.Patterns = slices.Clone(r.Forms), slices.Clone(r.Phrases), slices.Clone(r.Patterns)
	return c
}

// rules are the classes, then the buckets; see Rules.
var rules = []Rule{
	rule("gg:credential-value", CredentialValue, true,
		"token apikey api_key secret password passwd private_key access_key credential client_secret bearer authorization", ""),
	rule("gg:filesystem-path", FilesystemPath, true,
		"path filepath filename file_path dir directory folder target_path destination_path dest_path", ""),
	rule("gg:command-string", CommandString, true,
		"command cmd script code expression sql statement shell_cmd args? arguments? instruction prompt", ""),
	rule("gg:money-amount", MoneyAmount, true,
		"amount price total sum currency refund_amount charge_amount unit_amount cents", "amount in|monetary|currency code"),
	rule("gg:url-endpoint", URLEndpoint, true,
		"url uri endpoint webhook_url target_url host hostname domain link webhook base_url callback_url", ""),
	rule("raw_content_blob", RawContentBlob, false,
		"content body data payload html markdown file_content text", ""),
	rule("account_identity", AccountIdentity, false,
		"account account_id iban wallet recipient customer_id user_id beneficiary card_token payment_method bank routing_number email to from", ""),
}

// PublishedOrder returns the row order of the spec's published table (a
// copy).
func PublishedOrder() []Set {
	return []Set{URLEndpoint, CommandString, MoneyAmount, CredentialValue, FilesystemPath}
}

// rule builds a Rule from the pattern's alternation as the spec writes it;
// "x?" stands for the optional trailing letter the spec uses in args? and
// arguments?, expanded into both forms for the matcher.
func rule(id string, bit Set, normative bool, alternation, phrases string) Rule {
	r := Rule{ID: id, Bit: bit, Normative: normative}
	alts := strings.Fields(alternation)
	for _, a := range alts {
		if base, ok := strings.CutSuffix(a, "?"); ok {
			r.Forms = append(r.Forms, base[:len(base)-1], base)
			continue
		}
		r.Forms = append(r.Forms, a)
	}
	r.Patterns = append(r.Patterns, `(?<![a-z0-9_])(`+strings.Join(alts, "|")+`)(?![a-z0-9_])`)
	if phrases != "" {
		r.Phrases = strings.Split(phrases, "|")
		r.Patterns = append(r.Patterns, `\b(`+phrases+`)\b`)
	}
	return r
}

// RuleOf returns (a copy of) the rule whose bit is b, a single label; the
// zero Rule for any other b.
func RuleOf(b Set) Rule {
	for i := range rules {
		if rules[i].Bit == b {
			return rules[i].clone()
		}
	}
	return Rule{}
}

// ID returns the identifier of s, a single label ("gg:command-string"),
// or "" for any other s.
func (s Set) ID() string {
	for i := range rules {
		if rules[i].Bit == s {
			return rules[i].ID
		}
	}
	return ""
}

// Lookup returns (a copy of) the rule with the given identifier.
func Lookup(id string) (Rule, bool) {
	for i := range rules {
		if rules[i].ID == id {
			return rules[i].clone(), true
		}
	}
	return Rule{}, false
}

// IDs returns the identifiers of the labels in s that are also in mask,
// sorted as strings (the order the classify output uses). The slice is
// shared between callers and must not be modified; it is never nil, and
// its capacity equals its length, so appending to it copies.
func (s Set) IDs(mask Set) []string { return idsOf[s&mask&allLabels] }

// allLabels are the bits a Set can carry.
const allLabels = Classes | Buckets

// idsOf holds the sorted identifiers of every set of labels, built once:
// the per-property outputs need them for every row.
var idsOf = func() (t [allLabels + 1][]string) {
	for s := range t {
		ids := []string{}
		for i := range rules {
			if Set(s)&rules[i].Bit != 0 {
				ids = append(ids, rules[i].ID)
			}
		}
		sort.Strings(ids)
		t[s] = slices.Clip(ids)
	}
	return t
}()
